"""Fork server for `r42 up`: import what every service imports once, then fork each service.

Each service is a Python process that spends most of its start importing the same packages
(FastStream, nats-py, pydantic, the bus contracts, the store, the LLM library, the metrics
server): ~1 s of CPU apiece, five processes on two cores. The fork server imports that common
set once, while the supervisor starts NATS, and forks each service from it; the child then
imports only its own modules.

Supervision stays as with `python -m shared.runtime.launch`: the server forks twice, so the
service is orphaned at once and re-parented to the supervisor (a Linux child subreaper). The
supervisor waits for it, reads its exit status and signals its process group like any child;
the service sets its parent-death signal once the supervisor is its parent, and carries the
launch command line as its process title (so `ps`, `r42 status` and the stale-process reaper
see the same thing either way). Only what every service imports is preloaded: a service never
holds a module it would not have imported itself.

The client (`ForkServer`) falls back to the plain spawn whenever the server is missing, slow or
broken; restarts after the start-up use the plain spawn (the server is closed by then).
"""

from __future__ import annotations

import ctypes
import importlib
import json
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass

from shared.runtime.launch import SUPERVISOR_PID_ENV, defer_imports, launch_command
from shared.runtime.launch import main as launch

PR_SET_CHILD_SUBREAPER = 36
REPARENT_WAIT_S = 2.0
PRELOAD: tuple[str, ...] = (
    "services",
    "shared.runtime.service",
    "shared.runtime.session",
    "shared.bus.events",
    "shared.bus.broker",
    "shared.bus.consumer",
    "shared.bus.lifecycle",
    "shared.bus.objects",
    "shared.bus.rpc",
    "shared.bus.rpc_chunks",
    "shared.bus.telemetry",
    "shared.llm.runtime",
    "shared.llm.pricing",
    "shared.llm.telemetry",
    "shared.store.factory",
    "shared.store.models_telemetry",
    "shared.store.sqlite.store",
    "shared.obs.host",
    "shared.obs.ingest",
    "shared.obs.llm",
    "shared.obs.rpc",
    "shared.obs.server",
    "shared.obs.state",
    "shared.obs.tracing",
    "faststream.nats",
    "faststream.nats.prometheus",
    "nats.aio.client",
    "anyio._backends._asyncio",
    "anyio.streams.memory",
    "anyio.streams.stapled",
    "anyio.streams.tls",
    "anyio.to_thread",
)
"""Modules every service imports on its way to ready (a test checks each one does)."""


@dataclass(frozen=True)
class ForkRequest:
    """What the supervisor asks for: run `module args` with this environment and log file."""

    module: str
    args: tuple[str, ...]
    env: dict[str, str]
    log_path: str
    supervisor_pid: int

    @classmethod
    def parse(cls, line: bytes) -> ForkRequest:
        """One request line (JSON); ValueError when it is not a well-formed request."""
        raw = json.loads(line)
        if not isinstance(raw, dict):
            raise ValueError("request is not an object")
        module, args, env = raw.get("module"), raw.get("args"), raw.get("env")
        log_path, pid = raw.get("log_path"), raw.get("supervisor_pid")
        if not isinstance(module, str) or not isinstance(log_path, str):
            raise ValueError("module and log_path must be strings")
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ValueError("args must be a list of strings")
        if not isinstance(env, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in env.items()
        ):
            raise ValueError("env must map strings to strings")
        if not isinstance(pid, int) or pid <= 1:
            raise ValueError("supervisor_pid must be a pid")
        return cls(module, tuple(args), env, log_path, pid)

    def line(self) -> bytes:
        """The request as one JSON line."""
        body = {
            "module": self.module, "args": list(self.args), "env": self.env,
            "log_path": self.log_path, "supervisor_pid": self.supervisor_pid,
        }  # fmt: skip
        return json.dumps(body).encode() + b"\n"


def set_child_subreaper() -> bool:
    """Make this process adopt its orphaned descendants (Linux); False where it cannot."""
    if not sys.platform.startswith("linux") or not hasattr(os, "pidfd_open"):
        return False
    try:
        # The supervisor waits for adopted services through pidfds (Linux 5.3+): probe first,
        # so a fork is never made that could not be supervised.
        os.close(os.pidfd_open(os.getpid()))
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def preload(names: tuple[str, ...] = PRELOAD) -> int:
    """Import the common set (aiohttp deferred, as in every child); the modules loaded."""
    defer_imports()
    for name in names:
        importlib.import_module(name)
    return len(sys.modules)


def _send(out: int, body: dict[str, object]) -> None:
    os.write(out, json.dumps(body).encode() + b"\n")


def _fork_twice(request: ForkRequest, out: int) -> ForkRequest | None:
    """Fork the service (returned in it) so it is orphaned at once; report its pid on `out`."""
    read_end, write_end = os.pipe()
    middle = os.fork()
    if middle == 0:  # the middle process: fork the service, report it, vanish
        os.close(read_end)
        service = os.fork()
        if service == 0:
            os.close(write_end)
            return request
        os.write(write_end, str(service).encode())
        os._exit(0)
    os.close(write_end)
    os.waitpid(middle, 0)
    with os.fdopen(read_end, "rb") as reader:
        reported = reader.read()
    if reported.isdigit():
        _send(out, {"pid": int(reported)})
    else:
        _send(out, {"error": "fork failed"})
    return None


def serve(control: int) -> ForkRequest | None:
    """The server loop: preload, then fork per request line; returns only in a service."""
    from shared.runtime.launch import die_with_parent

    die_with_parent()
    # Before any child touches its environment: it finds the title's room from argv and env.
    import setproctitle  # noqa: F401

    started = time.perf_counter()
    try:
        loaded = preload()
    except Exception as exc:  # the supervisor falls back to the plain spawn
        _send(control, {"error": f"preload failed: {type(exc).__name__}: {exc}"})
        return None
    if threading.active_count() != 1:  # forking a threaded process can deadlock the child
        _send(control, {"error": f"preload started {threading.active_count() - 1} thread(s)"})
        return None
    _send(control, {"ready": loaded, "seconds": round(time.perf_counter() - started, 3)})
    with os.fdopen(os.dup(control), "rb") as lines:
        for line in lines:
            try:
                request = ForkRequest.parse(line)
            except ValueError as exc:
                _send(control, {"error": f"bad request: {exc}"})
                continue
            service = _fork_twice(request, control)
            if service is not None:
                os.close(control)
                return service
    return None


def _adopted_by(pid: int) -> bool:
    """Wait until the supervisor is this process's parent (the middle process has exited)."""
    deadline = time.monotonic() + REPARENT_WAIT_S
    while os.getppid() != pid:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.0005)
    return True


def become(request: ForkRequest) -> None:
    """Turn this forked process into the service's: title, session, files, environment."""
    import setproctitle

    setproctitle.setproctitle(" ".join(launch_command(request.module, request.args)))
    os.setsid()  # own group, as the plain spawn's start_new_session: killpg reaches only it
    devnull = os.open(os.devnull, os.O_RDONLY)
    log = os.open(request.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(devnull, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(devnull)
    os.close(log)
    os.environ.clear()
    os.environ.update(request.env)
    os.environ[SUPERVISOR_PID_ENV] = str(request.supervisor_pid)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if not _adopted_by(request.supervisor_pid):
        sys.exit("r42: the supervisor did not adopt this service; exiting")


def main(argv: list[str]) -> None:
    """`python -m shared.runtime.zygote FD`: serve on the inherited socket FD."""
    if len(argv) != 1 or not argv[0].isdigit():
        sys.exit("usage: python -m shared.runtime.zygote FD")
    request = serve(int(argv[0]))
    if request is None:
        return
    become(request)
    launch([request.module, *request.args])


if __name__ == "__main__":
    main(sys.argv[1:])
