"""The runtime state file and data-dir lock that let CLI commands find a running `r42 up`."""

from __future__ import annotations

import fcntl
import logging
import os
import signal
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from shared.errors import PermanentError
from shared.runtime.launch import LAUNCH_MODULE

log = logging.getLogger(__name__)

STATE_FILE = "runtime.json"
LOCK_FILE = "runtime.lock"


class RuntimeBusyError(PermanentError):
    """Another `r42 up` already runs on this data dir."""


class NatsNodeState(BaseModel):
    """One embedded nats-server: `nats` alone, `nats-1`… in a cluster."""

    name: str
    pid: int | None = Field(default=None, description="None while it restarts")
    url: str
    monitor_url: str | None = None
    store: str


class RuntimeState(BaseModel):
    """What a running `r42 up` publishes about itself in data_dir/runtime.json."""

    version: int = 1
    pid: int = Field(description="The `r42 up` process")
    data_dir: str
    nats_url: str
    nats_monitor_url: str | None = None
    nats_pid: int | None = Field(default=None, description="Set when the server is embedded")
    nats_store: str | None = None
    started_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    services: dict[str, int] = Field(default_factory=dict, description="name → live child pid")
    restarts: dict[str, int] = Field(default_factory=dict, description="name → restarts so far")
    ready: dict[str, bool] = Field(default_factory=dict, description="name → answered readiness")
    pending: list[str] = Field(
        default_factory=list, description="Instances of a staged start not started yet"
    )
    logs_dir: str | None = None
    nats_auth: bool = Field(default=False, description="The embedded server requires nkey users")
    users_dir: str | None = None
    nats_nodes: list[NatsNodeState] = Field(
        default_factory=list, description="Every embedded node; nats_url lists their URLs"
    )
    stream_replicas: int = Field(default=1, description="Replicas of each stream and bucket")


def state_path(data_dir: Path) -> Path:
    """Where the state file of a data dir lives."""
    return Path(data_dir) / STATE_FILE


def write_state(data_dir: Path, state: RuntimeState) -> None:
    """Write the state file atomically, readable by the owner only (it may hold a NATS URL)."""
    path = state_path(data_dir)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(state.model_dump_json(indent=2))
    os.replace(tmp, path)


def read_state(data_dir: Path) -> RuntimeState | None:
    """The state file's content, or None when there is none or it is unreadable."""
    path = state_path(data_dir)
    try:
        return RuntimeState.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValidationError, ValueError) as exc:
        log.warning("ignoring unreadable %s: %s", path, type(exc).__name__)
        return None


def remove_state(data_dir: Path, *, owner_pid: int) -> None:
    """Remove the state file if it belongs to `owner_pid` (never another run's file)."""
    state = read_state(data_dir)
    if state is not None and state.pid != owner_pid:
        return
    state_path(data_dir).unlink(missing_ok=True)


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (zombies count as gone)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    # The state letter follows the parenthesised command name, which may contain spaces.
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def find_running(data_dir: Path) -> RuntimeState | None:
    """The state of the `r42 up` running on this data dir, or None (no file, or a stale one)."""
    state = read_state(data_dir)
    if state is None or not pid_alive(state.pid):
        return None
    return state


class RuntimeLock:
    """An exclusive flock on data_dir/runtime.lock, held for the life of one `r42 up`."""

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> RuntimeLock:
        """Take the lock or raise RuntimeBusyError naming the running instance."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            running = read_state(self.path.parent)
            where = (
                f" (pid {running.pid}, started {running.started_at:%Y-%m-%d %H:%M:%S})"
                if running
                else ""
            )
            raise RuntimeBusyError(
                f"r42 is already running on {self.path.parent.resolve()}"
                f"{where}; stop it first (Ctrl-C in its terminal) "
                "or use another --data-dir"
            ) from None
        # The kernel drops the lock when the process dies, so a crash never leaves it stuck.
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return self

    def release(self) -> None:
        """Release the lock (idempotent)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def _cmdline(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    parts = [part.decode(errors="replace") for part in raw.split(b"\0") if part]
    # A forked service carries its launch command as its title: one string, spaces inside.
    return parts[0].split() if len(parts) == 1 else parts


def _terminate(pid: int, *, group: bool, timeout: float = 5.0) -> None:
    send = os.killpg if group else os.kill
    try:
        send(pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return
        time.sleep(0.05)
    try:
        send(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return


def reap_stale(state: RuntimeState) -> list[str]:
    """Stop processes a crashed `r42 up` left behind; return what was stopped.

    Only a process whose command line proves it is ours is touched (pids get reused).
    """
    if not sys.platform.startswith("linux"):
        return []
    stopped: list[str] = []
    nodes = [(n.pid, n.store) for n in state.nats_nodes]
    if not nodes and state.nats_store:
        nodes = [(state.nats_pid, state.nats_store)]
    for pid, store in nodes:
        cmd = _cmdline(pid) if pid else None
        if pid and cmd and Path(cmd[0]).name == "nats-server" and any(store in a for a in cmd):
            _terminate(pid, group=False)
            stopped.append(f"nats-server (pid {pid})")
    for name, pid in state.services.items():
        cmd = _cmdline(pid)
        if cmd and LAUNCH_MODULE in cmd:
            _terminate(pid, group=True)
            stopped.append(f"{name} (pid {pid})")
    return stopped
