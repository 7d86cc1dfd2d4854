"""Throwaway child services for supervisor and `r42 up` tests, and process checks."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path

from shared.runtime import pid_alive

# argv[1] (or $KID_MODE) picks the behaviour; each start records its pid in $KID_DIR/<name>.<pid>.
KID_SOURCE = """
import os, signal, subprocess, sys, time
from pathlib import Path

mode = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("KID_MODE", "sleep")
name = os.environ.get("R42_SERVICE_NAME", "kid")
out = Path(os.environ["KID_DIR"])
def record(path, text):  # atomically: a reader never sees a half-written file
    tmp = path.with_name("." + path.name)
    tmp.write_text(text)
    os.replace(tmp, path)
record(out / f"{name}.{os.getpid()}", os.environ.get("NATS_URL", ""))
if mode == "crash":
    print("boom: kid cannot start", file=sys.stderr, flush=True)
    sys.exit(3)
if mode == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if mode == "grandchild":
    helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    record(out / f"{name}.grandchild", str(helper.pid))
print("kid ready", flush=True)
while True:
    time.sleep(3600)
"""


def write_kid(directory: Path, module: str = "r42kid") -> dict[str, str]:
    """Write the kid module into `directory`; return env additions that make it importable."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{module}.py").write_text(KID_SOURCE)
    path = os.pathsep.join(p for p in (str(directory), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "KID_DIR": str(directory)}


def kid_pids(directory: Path, name: str) -> list[int]:
    """Pids of every start of service `name`, oldest first."""
    found = [p for p in directory.glob(f"{name}.*") if p.suffix[1:].isdigit()]
    # Start order: a pid file is written once, when that start begins.
    return [int(p.suffix[1:]) for p in sorted(found, key=lambda p: p.stat().st_mtime_ns)]


def wait_until(check: Callable[[], bool], *, timeout: float = 30.0, what: str = "") -> None:
    """Poll `check` until true; fail (not flake) only after a generous bound."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what or check}")
        time.sleep(0.05)


async def await_until(
    check: Callable[[], bool],
    *,
    timeout: float = 30.0,  # noqa: ASYNC109 - a polling bound, not an operation timeout
    what: str = "",
) -> None:
    """Async variant of wait_until."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what or check}")
        await asyncio.sleep(0.05)


def gone(pid: int) -> bool:
    """Whether the process is gone (or a zombie)."""
    return not pid_alive(pid)
