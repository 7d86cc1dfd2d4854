"""`r42 up` forks its services from the fork server, and supervises them like any child."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from services.cli.main import COMMAND_MODULES
from shared.obs.status import read_statuses
from shared.runtime import read_state
from shared.runtime.zygote import PRELOAD
from tests.services.cli.test_up import start_up  # noqa: F401 - the fixture
from tests.shared.runtime.kids import gone, kid_pids, wait_until, write_kid

ZYGOTE_OWN = {"shared.runtime.zygote", "setproctitle", "setproctitle._setproctitle"}
"""What the fork server itself needs, not a preload."""

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")


def _argv_parts(pid: int) -> list[bytes]:
    """A process's command line as the kernel keeps it: one part per argv entry."""
    return [p for p in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0") if p]


def _forked(pid: int) -> bool:
    """A forked service carries its launch command as one title string, not an argv."""
    parts = _argv_parts(pid)
    return len(parts) == 1 and b"shared.runtime.launch" in parts[0]


def _zygotes(pid: int) -> list[psutil.Process]:
    return [
        p for p in psutil.Process(pid).children(recursive=True)
        if any("shared.runtime.zygote" in part for part in p.cmdline())
    ]  # fmt: skip


async def test_forked_services_are_supervised_children(tmp_path: Path, start_up) -> None:  # noqa: F811
    data = tmp_path / "data"
    kids = tmp_path / "kids"
    up = start_up(data, "-s", "kid=r42kid", "-s", "other=r42kid", env=write_kid(kids))
    state = await asyncio.to_thread(up.wait_ready, data, {"kid", "other"})
    kid = state.services["kid"]
    await asyncio.to_thread(wait_until, lambda: kid_pids(kids, "kid") == [kid], what="kid up")
    # Forked (its title is the launch command), adopted by `r42 up`, in its own session.
    assert _forked(kid), _argv_parts(kid)
    title = _argv_parts(kid)[0].decode()
    assert title.endswith("-m shared.runtime.launch r42kid"), title
    proc = psutil.Process(kid)
    assert proc.ppid() == up.proc.pid and os.getsid(kid) == kid
    # Its own environment: the bus URL the supervisor gave it, its log file for output.
    assert (kids / f"kid.{kid}").read_text() == state.nats_url
    await asyncio.to_thread(
        wait_until, lambda: "kid ready" in (data / "logs" / "kid.log").read_text(), what="log"
    )
    # The fork server is gone once everything started; the services keep running.
    await asyncio.to_thread(wait_until, lambda: not _zygotes(up.proc.pid), what="no zygote")

    # kill -9: the supervisor reads the real exit status and restarts it (plainly now).
    os.kill(kid, signal.SIGKILL)
    await asyncio.to_thread(
        wait_until, lambda: len(kid_pids(kids, "kid")) == 2, timeout=30, what="kid restarted"
    )
    await asyncio.to_thread(
        wait_until, lambda: "killed by SIGKILL" in up.output(), what="the exit reported"
    )
    again = kid_pids(kids, "kid")[1]
    assert not _forked(again) and psutil.Process(again).ppid() == up.proc.pid
    assert re.search(r"\[kid\] killed by SIGKILL after [\d.]+ s", up.output()), up.output()

    up.proc.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(up.proc.wait, 60) == 0, up.output()
    assert all(gone(pid) for pid in [*kid_pids(kids, "kid"), *kid_pids(kids, "other")])


async def test_a_killed_up_takes_its_forked_services_along(tmp_path: Path, start_up) -> None:  # noqa: F811
    data = tmp_path / "data"
    kids = tmp_path / "kids"
    up = start_up(data, "-s", "kid=r42kid", env=write_kid(kids))
    state = await asyncio.to_thread(up.wait_ready, data, {"kid"})
    kid = state.services["kid"]
    assert _forked(kid) and psutil.Process(kid).ppid() == up.proc.pid
    up.proc.kill()
    up.proc.wait()
    # The parent-death signal was set once `r42 up` adopted it: SIGTERM, then gone.
    await asyncio.to_thread(wait_until, lambda: gone(kid), timeout=15, what="kid to die")
    assert read_state(data) is not None  # left for the next `r42 up` to clean up


def test_fork_server_off_spawns_each_service_plainly(tmp_path: Path, start_up) -> None:  # noqa: F811
    data = tmp_path / "data"
    kids = tmp_path / "kids"
    env = {**write_kid(kids), "R42_FORK_SERVER": "false"}
    up = start_up(data, "-s", "kid=r42kid", env=env)
    state = up.wait_ready(data, {"kid"})
    parts = _argv_parts(state.services["kid"])
    assert parts[-3:] == [b"-m", b"shared.runtime.launch", b"r42kid"], parts
    assert not _zygotes(up.proc.pid)
    up.proc.send_signal(signal.SIGTERM)
    assert up.proc.wait(60) == 0, up.output()


@pytest.mark.parametrize("entry", ["services.cli.entry", "services.cli.main"])
def test_up_help_starts_no_fork_server(entry: str) -> None:
    """`r42 up --help` must not pay for (or leave behind) a preload, through either entry."""
    assert COMMAND_MODULES["up"] == ("services.cli.up",)
    proc = subprocess.Popen(
        [sys.executable, "-c", f"from {entry} import main; main()", "up", "--help"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    children: set[int] = set()
    while proc.poll() is None:
        try:
            children |= {c.pid for c in psutil.Process(proc.pid).children()}
        except psutil.NoSuchProcess:
            break
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0 and b"--no-console" in out
    assert not children


SITECUSTOMIZE = """
import atexit, json, os, sys
def _dump():
    with open(os.path.join(os.environ["MODULES_DIR"], f"{os.getpid()}.json"), "w") as fh:
        json.dump([os.environ.get("R42_SERVICE_NAME", ""), sorted(sys.modules)], fh)
atexit.register(_dump)
"""


def test_the_preload_holds_only_what_every_service_imports(tmp_path: Path) -> None:
    """A forked service must not carry a module it would not load itself (RSS adds up)."""
    script = (
        "import json, sys; from shared.runtime.zygote import preload; preload(); "
        "print(json.dumps(sorted(sys.modules)))"
    )
    preload = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             timeout=120, check=True)  # fmt: skip
    preloaded = set(json.loads(preload.stdout)) - ZYGOTE_OWN
    assert len(preloaded) > 300 and set(PRELOAD) <= preloaded
    # Every service as `r42 up` runs it, spawned plainly; each writes its modules at exit.
    site, dumps, data = tmp_path / "site", tmp_path / "modules", tmp_path / "data"
    site.mkdir()
    dumps.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    python_path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("R42_", "ANTHROPIC_"))},
        "R42_FORK_SERVER": "off", "R42_LLM": "offline", "PYTHONPATH": python_path,
        "MODULES_DIR": str(dumps),
    }  # fmt: skip
    up = subprocess.Popen(
        [sys.executable, "-c", "from services.cli.main import main; main()", "up",
         "--no-console", "--data-dir", str(data)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    services = {"r42", "extractor", "quiz", "content", "telemetry"}
    try:

        def all_ready() -> bool:
            if up.poll() is not None:
                raise AssertionError(f"r42 up exited ({up.returncode})")
            return services <= {s.instance for s in read_statuses(data) if s.ready}

        wait_until(all_ready, timeout=90, what="every service")
    finally:
        up.send_signal(signal.SIGTERM)
        up.wait(60)
    loaded = {}
    for path in dumps.glob("*.json"):
        name, modules = json.loads(path.read_text())
        loaded[name] = set(modules)
    assert services <= set(loaded), sorted(loaded)
    for name in sorted(services):
        extra = sorted(preloaded - loaded[name])
        assert not extra, f"{name} does not import {extra[:20]} ({len(extra)} in all)"
