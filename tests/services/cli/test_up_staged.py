"""`r42 up`'s staged start: the chat path first, the later stage once it answers."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import sys
from pathlib import Path

import pytest
from rich.console import Console

from services.cli.up import serve
from shared.config import build_settings
from shared.runtime import ServiceSpec, read_state, state_path
from tests.services.cli.test_up import CONSOLE_MODULE
from tests.shared.runtime.kids import await_until, gone, kid_pids, write_kid

LATER = frozenset({"slow"})


def _kids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key, value in write_kid(tmp_path / "kids").items():
        monkeypatch.setenv(key, value)
    return tmp_path / "kids"


def _serve(
    tmp_path: Path, specs: tuple[ServiceSpec, ...], *, console: bool = False
) -> tuple[asyncio.Task[int], io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    settings = build_settings(data_dir=tmp_path / "data")
    run = serve(
        settings=settings, services=specs, console=console, out=Console(file=out, width=200),
        err=Console(file=err, width=200), later=LATER,
    )  # fmt: skip
    return asyncio.create_task(run), out, err


async def test_the_later_stage_starts_once_the_chat_path_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kids = _kids(tmp_path, monkeypatch)
    specs = (ServiceSpec("kid", "r42kid"), ServiceSpec("slow", "r42kid"))
    task, out, err = _serve(tmp_path, specs)
    await await_until(lambda: "every service answers now" in err.getvalue(), what="later stage")
    banner = out.getvalue()
    # "Up" came while `slow` was not started yet, and the banner says it is still coming.
    assert "R42 is up" in banner
    services = next(line for line in banner.splitlines() if line.lstrip().startswith("services"))
    assert "kid (pid" in services and "slow" not in services
    assert "starting  slow (after the chat path" in banner
    assert "(slow too)" in err.getvalue()
    state = read_state(tmp_path / "data")
    assert state is not None and state.pending == []
    assert set(state.services) == {"kid", "slow"} and state.ready == {"kid": True, "slow": True}
    assert len(kid_pids(kids, "slow")) == 1
    os.kill(os.getpid(), signal.SIGTERM)
    assert await asyncio.wait_for(task, 60) == 0
    assert all(gone(pid) for pid in state.services.values())
    assert not state_path(tmp_path / "data").exists()


async def test_a_stop_while_the_chat_path_starts_never_starts_the_later_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from services.cli.status import collect

    kids = _kids(tmp_path, monkeypatch)
    # A kid under the quiz service's name never binds quiz's rpc subjects: never ready.
    specs = (ServiceSpec("quiz", "r42kid"), ServiceSpec("slow", "r42kid"))
    task, out, err = _serve(tmp_path, specs)
    await await_until(lambda: bool(kid_pids(kids, "quiz")), what="the chat path to start")
    doc = await asyncio.to_thread(collect, tmp_path / "data")
    # `r42 status` tells it as it is: quiz runs but does not answer, slow waits its turn.
    assert doc is not None and doc["starting"] == ["slow"]
    assert [(s["name"], s["ready"]) for s in doc["services"]] == [("quiz", False)]
    quiz = doc["services"][0]["pid"]
    os.kill(os.getpid(), signal.SIGTERM)
    assert await asyncio.wait_for(task, 60) == 0
    assert "R42 is up" not in out.getvalue() and "nothing left running" in err.getvalue()
    assert kid_pids(kids, "slow") == [] and gone(quiz)
    assert not state_path(tmp_path / "data").exists()


async def test_the_console_opens_with_the_chat_path_and_says_in_dutch_what_still_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import services.registry as registry

    _kids(tmp_path, monkeypatch)
    (tmp_path / "r42stagedconsole.py").write_text(CONSOLE_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "CONSOLE", "r42stagedconsole:run")
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setenv("CONSOLE_OUT", str(tmp_path / "console.out"))
    specs = (ServiceSpec("kid", "r42kid"), ServiceSpec("slow", "r42kid"))
    task, out, err = _serve(tmp_path, specs, console=True)
    assert await asyncio.wait_for(task, 60) == 0
    banner = out.getvalue()
    assert "R42 draait" in banner
    assert "start nog slow (na de chat gestart; hun werk wacht tot ze er zijn)" in banner
    # Nothing is printed into the console's prompt when the later stage answers.
    assert "every service answers" not in err.getvalue()
    assert "wachten tot de chat antwoordt" in err.getvalue()
