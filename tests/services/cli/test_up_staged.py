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
from shared.runtime import RestartPolicy, ServiceSpec, read_state, state_path
from tests.services.cli.test_up import CONSOLE_MODULE
from tests.shared.runtime.kids import await_until, gone, kid_pids, write_kid

LATER = frozenset({"slow"})


def _kids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key, value in write_kid(tmp_path / "kids").items():
        monkeypatch.setenv(key, value)
    return tmp_path / "kids"


def _serve(
    tmp_path: Path, specs: tuple[ServiceSpec, ...], *, console: bool = False,
    policy: RestartPolicy | None = None, later: frozenset[str] = LATER,
) -> tuple[asyncio.Task[int], io.StringIO, io.StringIO]:  # fmt: skip
    out, err = io.StringIO(), io.StringIO()
    settings = build_settings(data_dir=tmp_path / "data")
    run = serve(
        settings=settings, services=specs, console=console, out=Console(file=out, width=200),
        err=Console(file=err, width=200), later=later, policy=policy,
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
    # Spawned: its process writes its pid file once Python has started it.
    await await_until(lambda: len(kid_pids(kids, "slow")) == 1, what="the later kid to run")
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


async def test_a_later_service_that_never_answers_ends_r42_up_as_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kids = _kids(tmp_path, monkeypatch)
    # Under the telemetry service's name a kid is ready only once it binds telemetry's
    # subjects, which it never does: it crash-loops before that.
    specs = (ServiceSpec("kid", "r42kid"), ServiceSpec("telemetry", "r42kid", ("crash",)))
    quick = RestartPolicy(initial_delay_s=0.01, max_delay_s=0.02, give_up_after=2)
    task, out, err = _serve(tmp_path, specs, policy=quick, later=frozenset({"telemetry"}))
    assert await asyncio.wait_for(task, 60) == 1
    assert "R42 is up" in out.getvalue()  # the chat path did answer first
    said = err.getvalue()
    assert "r42 up: telemetry did not become ready (crash loop); telemetry: boom" in said
    assert "every service answers now" not in said and "nothing left running" in said
    assert all(gone(pid) for pid in kid_pids(kids, "kid"))
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


def test_only_later_services_start_in_one_stage(tmp_path: Path) -> None:
    from shared.runtime import EmbeddedRuntime

    specs = [ServiceSpec("slow", "r42kid"), ServiceSpec("kid", "r42kid")]
    staged = EmbeddedRuntime(data_dir=tmp_path, services=specs, later=LATER)
    assert (staged.first, staged.later) == (["kid"], ["slow"])
    alone = EmbeddedRuntime(data_dir=tmp_path, services=specs[:1], later=LATER)
    assert (alone.first, alone.later) == (["slow"], [])
