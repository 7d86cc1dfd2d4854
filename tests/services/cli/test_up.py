"""`r42 up` as a real process: starts NATS and services, refuses a second run, stops cleanly."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from shared.bus import NatsAuth
from shared.config import build_settings
from shared.errors import BusError
from shared.runtime import RuntimeState, SupervisorEvent, check_nats, read_state, state_path
from tests.shared.runtime.kids import gone, kid_pids, wait_until, write_kid

R42 = [sys.executable, "-c", "from services.cli.main import main; main()"]


class UpProcess:
    """A running `r42 up` with its output in files (a pipe nobody reads could block it)."""

    def __init__(self, proc: subprocess.Popen[bytes], out: Path, err: Path) -> None:
        self.proc, self.out, self.err = proc, out, err

    def output(self) -> str:
        return self.out.read_text() + self.err.read_text()

    def wait_ready(self, data_dir: Path, services: set[str]) -> RuntimeState:
        """Wait until the state file lists NATS and every service; fail with its output."""

        def ready() -> bool:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"r42 up exited early ({self.proc.returncode}):\n{self.output()}"
                )
            state = read_state(data_dir)
            # "up" is printed only once every service answers its readiness check.
            up = "R42 is up" in self.out.read_text()
            return up and state is not None and set(state.services) == services

        wait_until(ready, timeout=60, what="r42 up to be ready")
        state = read_state(data_dir)
        assert state is not None
        return state


@pytest.fixture
def start_up(tmp_path: Path) -> Iterator:
    started: list[subprocess.Popen[bytes]] = []

    def start(data_dir: Path, *args: str, env: dict[str, str] | None = None) -> UpProcess:
        n = len(started)
        out, err = tmp_path / f"up{n}.out", tmp_path / f"up{n}.err"
        with out.open("wb") as fo, err.open("wb") as fe:
            proc = subprocess.Popen(
                [*R42, "up", "--no-console", "--data-dir", str(data_dir), *args],
                stdin=subprocess.DEVNULL, stdout=fo, stderr=fe, env={**os.environ, **(env or {})},
            )  # fmt: skip
        started.append(proc)
        return UpProcess(proc, out, err)

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def _nats_answers(url: str, data_dir: Path | None = None) -> bool:
    """Whether the server answers (as the data dir's CLI user; anonymous is refused)."""
    seed = data_dir / "nats" / "users" / "cli.nk" if data_dir else None
    auth = NatsAuth(seed, "_INBOX_cli") if seed and seed.exists() else None
    try:
        await check_nats(url, auth=auth)
    except BusError:
        return False
    return True


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_up_runs_services_and_stops_cleanly(
    tmp_path: Path, start_up, sig: signal.Signals
) -> None:
    data = tmp_path / "data"
    kid_env = write_kid(tmp_path / "kids")
    up = start_up(data, "-s", "kid=r42kid", "-s", "other=r42kid", env=kid_env)
    state = await asyncio.to_thread(up.wait_ready, data, {"kid", "other"})
    assert state.pid == up.proc.pid and state.nats_pid
    assert await _nats_answers(state.nats_url, data)
    # Children got the bus and the data dir through their environment.
    kid_file = tmp_path / "kids" / f"kid.{state.services['kid']}"
    await asyncio.to_thread(wait_until, kid_file.exists, what="kid pid file")
    assert kid_file.read_text() == state.nats_url
    # The banner is written line by line after the state file: wait for its last line.
    await asyncio.to_thread(
        wait_until, lambda: "Ctrl-C or SIGTERM" in up.out.read_text(), what="the whole banner"
    )
    out = up.out.read_text()
    assert state.nats_url in out and "offline (no ANTHROPIC_API_KEY)" in out
    assert "logs" in out and "r42 events tail" in out

    up.proc.send_signal(sig)
    assert await asyncio.to_thread(up.proc.wait, 60) == 0, up.output()
    assert gone(state.nats_pid)
    assert all(gone(pid) for pid in state.services.values())
    assert all(gone(pid) for pid in kid_pids(tmp_path / "kids", "kid"))
    assert not state_path(data).exists()
    assert not await _nats_answers(state.nats_url, data)
    assert "nothing left running" in up.err.read_text()


async def test_second_up_on_the_same_data_dir_is_refused(tmp_path: Path, start_up) -> None:
    data = tmp_path / "data"
    first = start_up(data, "-s", "kid=r42kid", env=write_kid(tmp_path / "kids"))
    state = await asyncio.to_thread(first.wait_ready, data, {"kid"})
    second = start_up(data, "-s", "kid=r42kid", env=write_kid(tmp_path / "kids"))
    assert await asyncio.to_thread(second.proc.wait, 60) != 0
    assert "already running" in second.output() and str(state.pid) in second.output()
    # The first run is untouched: same state, still serving.
    assert read_state(data) == state and first.proc.poll() is None
    assert await _nats_answers(state.nats_url, data)
    first.proc.terminate()
    assert await asyncio.to_thread(first.proc.wait, 60) == 0


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_nats_url_is_a_clear_error_and_changes_nothing(
    tmp_path: Path, start_up
) -> None:
    data = tmp_path / "data"
    url = f"nats://user:s3cret@127.0.0.1:{_closed_port()}"
    up = start_up(data, env={"NATS_URL": url})
    assert up.proc.wait(60) != 0
    err = up.err.read_text()
    assert "cannot reach NATS at nats://***@127.0.0.1" in err and "refused" in err
    assert "s3cret" not in up.output()
    assert not data.exists()


def test_unknown_service_is_rejected(tmp_path: Path, start_up) -> None:
    up = start_up(tmp_path / "data", "-s", "no-such-service")
    assert up.proc.wait(60) == 2
    assert "unknown service 'no-such-service'" in up.err.read_text()
    assert not (tmp_path / "data").exists()


def test_llm_summary_never_shows_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from services.cli.up_banner import llm_summary

    assert llm_summary(build_settings()).startswith("offline (no ANTHROPIC_API_KEY)")
    assert "R42_LLM=offline" in llm_summary(build_settings(llm="offline"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-verysecret")
    summary = llm_summary(build_settings())
    assert summary.startswith("anthropic") and "claude-" in summary
    assert "verysecret" not in summary


CONSOLE_MODULE = """
import os, pathlib

async def run(*, settings, opened):
    out = pathlib.Path(os.environ["CONSOLE_OUT"])
    out.write_text(settings.nats_url or "")
    if os.environ.get("CONSOLE_FAIL") == "connecting":
        raise RuntimeError("console broke while connecting")
    await opened.wait()  # r42 up opens it below the banner
    out.with_suffix(".opened").write_text("yes")
    if os.environ.get("CONSOLE_FAIL") == "running":
        raise RuntimeError("console broke")
"""


@pytest.mark.parametrize("fail", ["", "running", "connecting"], ids=["quits", "fails", "early"])
async def test_console_gets_the_live_bus_and_its_end_stops_everything(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail: str
) -> None:
    import services.registry as registry
    from services.cli.up import serve

    (tmp_path / "r42testconsole.py").write_text(CONSOLE_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "CONSOLE", "r42testconsole:run")
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setenv("CONSOLE_OUT", str(tmp_path / "console.out"))
    monkeypatch.setenv("CONSOLE_FAIL", fail)
    data = tmp_path / "data"
    settings = build_settings(data_dir=data)
    out, err = io.StringIO(), io.StringIO()
    rc = await asyncio.wait_for(
        serve(
            settings=settings, services=(), console=True, out=Console(file=out),
            err=Console(file=err),
        ),
        60,
    )  # fmt: skip
    url = (tmp_path / "console.out").read_text()
    assert url.startswith("nats://127.0.0.1:")
    assert rc == (1 if fail else 0)
    # Above the console the banner is part of that (Dutch) surface.
    assert "R42 draait" in out.getvalue() and "hieronder: stel een vraag" in out.getvalue()
    assert "R42 is up" not in out.getvalue()
    # It connected while the services started, and opened (only) below the banner.
    assert (tmp_path / "console.opened").exists() is (fail != "connecting")
    assert ("console broke" in err.getvalue()) is bool(fail)
    assert not state_path(data).exists()
    assert not await _nats_answers(url)


async def test_a_second_signal_kills_services_that_ignore_sigterm(tmp_path: Path, start_up) -> None:
    data = tmp_path / "data"
    env = {**write_kid(tmp_path / "kids"), "KID_MODE": "stubborn"}
    up = start_up(data, "-s", "kid=r42kid", env=env)
    state = await asyncio.to_thread(up.wait_ready, data, {"kid"})
    log = data / "logs" / "kid.log"
    await asyncio.to_thread(wait_until, lambda: "kid ready" in log.read_text(), what="kid ready")
    up.proc.send_signal(signal.SIGINT)
    await asyncio.to_thread(wait_until, lambda: "stopping" in up.err.read_text(), what="stopping")
    up.proc.send_signal(signal.SIGINT)
    assert await asyncio.to_thread(up.proc.wait, 60) == 0, up.output()
    err = up.err.read_text()
    assert "second interrupt" in err and "[kid] did not stop in time; killed" in err
    assert gone(state.services["kid"]) and gone(state.nats_pid or 0)
    assert not state_path(data).exists()


def test_reporter_speaks_up_only_when_something_goes_wrong() -> None:
    from services.cli.up import _Reporter

    buf = io.StringIO()
    report = _Reporter(Console(file=buf, width=200))
    report(SupervisorEvent("kid", "started", pid=10))
    assert buf.getvalue() == ""
    report(SupervisorEvent("kid", "exited", pid=10, message="exit code 1 after 0.2 s"))
    report(SupervisorEvent("kid", "restarting", delay_s=0.5))
    report(SupervisorEvent("kid", "started", pid=11))
    report(SupervisorEvent("kid", "gave_up", message="crashed 5 times in a row"))
    assert buf.getvalue().splitlines() == [
        "[kid] exit code 1 after 0.2 s",
        "[kid] restarting in 0.5 s",
        "[kid] restarted (pid 11)",
        "[kid] crashed 5 times in a row",
    ]
