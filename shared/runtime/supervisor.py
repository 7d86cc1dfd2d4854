"""Run services as child processes: restart with backoff, give up on crash loops, stop cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from shared.errors import ConfigError
from shared.runtime.launch import EAGER_MODULES, SUPERVISOR_PID_ENV, launch_command

if TYPE_CHECKING:
    from shared.runtime.forking import ForkServer

log = logging.getLogger(__name__)

_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
_MODULE_RE = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
LOG_ROTATE_BYTES = 10 * 1024 * 1024
MAX_REPLICAS = 8


@dataclass(frozen=True)
class ServiceSpec:
    """One supervised process: `python -m module *args`, logging to logs/<instance>.log.

    `replica` numbers the copies of a service run side by side (0: the only one); they share
    the service's NATS user, durable consumers and queue groups.
    """

    name: str
    module: str
    args: tuple[str, ...] = ()
    replica: int = 0

    @property
    def instance(self) -> str:
        """`name` alone, or `name.<replica>` for one of several copies."""
        return self.name if self.replica == 0 else f"{self.name}.{self.replica}"

    def __post_init__(self) -> None:
        if not _NAME_RE.fullmatch(self.name):
            raise ConfigError(
                f"service name {self.name!r} is invalid: use lowercase letters, digits, '-', '_'"
            )
        if not _MODULE_RE.fullmatch(self.module):
            raise ConfigError(f"service {self.name}: {self.module!r} is not a module path")
        if not all(isinstance(a, str) for a in self.args):
            raise ConfigError(f"service {self.name}: args must be strings")
        if not 0 <= self.replica <= MAX_REPLICAS:
            raise ConfigError(f"service {self.name}: replica must be 0..{MAX_REPLICAS}")


SINGLE_REPLICA = frozenset({"gateway", "gateway-teams"})
"""Services that run once whatever `--replicas` says: the gateway listens on a fixed HTTP
port (Slack HTTP mode, the Teams messaging endpoint) and holds the Slack Socket Mode
session, so a second copy on the same machine would fail to bind or split Slack's events."""


def replicate(specs: Sequence[ServiceSpec], replicas: int) -> tuple[ServiceSpec, ...]:
    """`replicas` copies of each spec (numbered 1..N), one of those in SINGLE_REPLICA."""
    if not 1 <= replicas <= MAX_REPLICAS:
        raise ConfigError(f"--replicas must be between 1 and {MAX_REPLICAS}")
    if replicas == 1:
        return tuple(specs)
    out: list[ServiceSpec] = []
    for spec in specs:
        if spec.name in SINGLE_REPLICA:
            out.append(spec)
            continue
        out += [ServiceSpec(spec.name, spec.module, spec.args, replica=i)
                for i in range(1, replicas + 1)]  # fmt: skip
    return tuple(out)


@dataclass(frozen=True)
class RestartPolicy:
    """Backoff doubles per failure up to a cap; a long run resets it; fast crashes give up."""

    initial_delay_s: float = 0.5
    factor: float = 2.0
    max_delay_s: float = 30.0
    reset_after_s: float = 60.0
    fast_exit_s: float = 10.0
    give_up_after: int = 5
    stop_timeout_s: float = 10.0
    max_restarts: int = 8
    restart_window_s: float = 300.0
    """A crash loop of any speed: more than `max_restarts` exits within the window gives up."""

    def __post_init__(self) -> None:
        if self.initial_delay_s < 0 or self.max_delay_s < self.initial_delay_s:
            raise ConfigError("restart delays must satisfy 0 <= initial <= max")
        if self.factor < 1 or self.give_up_after < 1 or self.stop_timeout_s <= 0:
            raise ConfigError("restart factor must be >= 1, give_up_after >= 1, timeout > 0")
        if self.max_restarts < 1 or self.restart_window_s <= 0:
            raise ConfigError("max_restarts must be >= 1 and restart_window_s > 0")


def backoff_delay(policy: RestartPolicy, failures: int) -> float:
    """The wait before restart number `failures` (1 = after the first failure)."""
    if failures < 1:
        return 0.0
    return min(policy.max_delay_s, policy.initial_delay_s * policy.factor ** (failures - 1))


class RestartTracker:
    """Per-service memory of recent exits: how long to back off, or whether to give up."""

    def __init__(
        self, policy: RestartPolicy, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.policy = policy
        self.failures = 0
        self.fast_failures = 0
        self.recent: deque[float] = deque()
        self.clock = clock
        self.reason = ""

    def on_exit(self, uptime_s: float) -> float | None:
        """Record an unexpected exit; return the delay before the restart, or None to give up."""
        now = self.clock()
        self.recent.append(now)
        while self.recent and now - self.recent[0] > self.policy.restart_window_s:
            self.recent.popleft()
        if len(self.recent) > self.policy.max_restarts:
            self.reason = (
                f"exited {len(self.recent)} times within {self.policy.restart_window_s:g} s"
            )
            return None
        if uptime_s >= self.policy.reset_after_s:
            self.failures = 0
        if uptime_s >= self.policy.fast_exit_s:
            self.fast_failures = 0
        self.failures += 1
        if uptime_s < self.policy.fast_exit_s:
            self.fast_failures += 1
        if self.fast_failures >= self.policy.give_up_after:
            self.reason = (
                f"crashed {self.fast_failures} times in a row, each within "
                f"{self.policy.fast_exit_s:g} s of starting"
            )
            return None
        return backoff_delay(self.policy, self.failures)


EventKind = Literal["started", "exited", "restarting", "gave_up", "killed", "stopped"]


@dataclass(frozen=True)
class SupervisorEvent:
    """Something that happened to a child (for the terminal and the state file)."""

    service: str
    kind: EventKind
    pid: int | None = None
    returncode: int | None = None
    uptime_s: float | None = None
    delay_s: float | None = None
    message: str = ""


class ChildProcess(Protocol):
    """A spawned (asyncio) or forked (fork server) child, waited for and signalled alike."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...

    def send_signal(self, sig: int) -> None: ...


@dataclass
class _Child:
    spec: ServiceSpec
    proc: ChildProcess | None = None
    task: asyncio.Task[None] | None = None
    starts: int = 0


def describe_exit(returncode: int) -> str:
    """'exit code 1' or 'killed by SIGKILL'."""
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit code {returncode}"


def log_tail(path: Path, *, lines: int = 3, max_bytes: int = 4096) -> list[str]:
    """The last non-empty lines of a log file (to say why a child died)."""
    try:
        with path.open("rb") as fh:
            fh.seek(max(0, path.stat().st_size - max_bytes))
            text = fh.read().decode(errors="replace")
    except OSError:
        return []
    kept = [ln.rstrip()[:300] for ln in text.splitlines() if ln.strip()]
    return [ln for ln in kept if not ln.startswith("--- ")][-lines:]


class Supervisor:
    """Runs each ServiceSpec as `python -m shared.runtime.launch MODULE`, in its own group.

    Services are long-running, so any exit while the supervisor runs (even code 0) is
    unexpected and restarted under the RestartPolicy.
    """

    def __init__(
        self,
        specs: Sequence[ServiceSpec],
        *,
        log_dir: Path,
        env: Mapping[str, str] | None = None,
        policy: RestartPolicy | None = None,
        python: str | None = None,
        on_event: Callable[[SupervisorEvent], None] | None = None,
        service_env: Mapping[str, Mapping[str, str]] | None = None,
        fork_server: ForkServer | None = None,
    ) -> None:
        names = [s.instance for s in specs]
        if len(set(names)) != len(names):
            raise ConfigError(f"duplicate service names: {names}")
        self.log_dir = Path(log_dir)
        self.env = dict(os.environ if env is None else env)
        # Per service: its own NATS credentials, never another service's.
        self.service_env = {k: dict(v) for k, v in (service_env or {}).items()}
        self.policy = policy or RestartPolicy()
        self.python = python or sys.executable
        self.on_event = on_event
        self.events: deque[SupervisorEvent] = deque(maxlen=1000)
        self._children = {s.instance: _Child(s) for s in specs}
        self._stopping = asyncio.Event()
        self.fork_server = fork_server
        """Forks services from pre-imported modules during the start; None: plain spawns."""

    async def release_fork_server(self) -> None:
        """Close the fork server (later starts and restarts spawn plainly)."""
        server, self.fork_server = self.fork_server, None
        if server is not None:
            await server.close()

    @property
    def pids(self) -> dict[str, int]:
        """Live children by instance (the service name when it runs once)."""
        return {
            name: c.proc.pid
            for name, c in self._children.items()
            if c.proc is not None and c.proc.returncode is None
        }

    @property
    def restarts(self) -> dict[str, int]:
        """How often each instance was restarted."""
        return {name: max(0, c.starts - 1) for name, c in self._children.items()}

    def log_path(self, name: str) -> Path:
        """The log file an instance's stdout and stderr go to."""
        return self.log_dir / f"{name}.log"

    @property
    def pending(self) -> list[str]:
        """Instances not started yet (a staged start brings them up later), in spec order."""
        return [name for name, c in self._children.items() if c.task is None]

    async def start(self, instances: Collection[str] | None = None) -> None:
        """Start these children (default: every one not started) and their restart loops.

        Returns once they are spawned. After `stop` it starts nothing: a staged start
        interrupted by Ctrl-C must not bring up its later stage behind the stop.
        """
        unknown = set(instances or ()) - set(self._children)
        if unknown:
            raise ConfigError(f"unknown service instances: {sorted(unknown)}")
        self.log_dir.mkdir(parents=True, exist_ok=True)
        for name, child in self._children.items():
            if child.task is not None or (instances is not None and name not in instances):
                continue
            if self._stopping.is_set():
                return
            spawned = asyncio.get_running_loop().create_future()
            child.task = asyncio.create_task(self._run(child, spawned), name=child.spec.instance)
            await spawned

    async def wait(self) -> None:
        """Wait until every restart loop has ended (all stopped or given up)."""
        tasks = [c.task for c in self._children.values() if c.task]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def stop(self, *, timeout: float | None = None) -> None:  # noqa: ASYNC109
        """SIGTERM every child's process group, wait, then SIGKILL what is left."""
        timeout = self.policy.stop_timeout_s if timeout is None else timeout
        self._stopping.set()
        await self.release_fork_server()
        for child in self._children.values():
            self._signal(child, signal.SIGTERM)
        tasks = [c.task for c in self._children.values() if c.task and not c.task.done()]
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=timeout)
        if pending:
            self.kill()
            _, pending = await asyncio.wait(pending, timeout=5.0)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

    def kill(self) -> None:
        """SIGKILL every live child's process group now (second Ctrl-C)."""
        self._stopping.set()
        if self.fork_server is not None:
            self.fork_server.kill()
        for child in self._children.values():
            if self._signal(child, signal.SIGKILL):
                pid = child.proc.pid if child.proc else None
                event = SupervisorEvent(child.spec.instance, "killed", pid=pid, message="SIGKILL")
                self._emit(event)

    def _signal(self, child: _Child, sig: signal.Signals) -> bool:
        proc = child.proc
        if proc is None or proc.returncode is not None:
            return False
        try:
            # Children lead their own process group: this reaches their helpers too.
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return False
        except PermissionError:
            proc.send_signal(sig)
        return True

    def _emit(self, event: SupervisorEvent) -> None:
        self.events.append(event)
        log.info("%s %s %s", event.service, event.kind, event.message)
        if self.on_event is not None:
            try:
                self.on_event(event)
            except Exception:  # a reporting bug must not kill the supervisor
                log.exception("supervisor on_event callback failed")

    async def _spawn(self, child: _Child) -> ChildProcess:
        spec = child.spec
        path = self.log_path(spec.instance)
        if path.exists() and path.stat().st_size > LOG_ROTATE_BYTES:
            path.replace(path.with_suffix(".log.1"))
        env = {
            **self.env,
            **self.service_env.get(spec.name, {}),
            SUPERVISOR_PID_ENV: str(os.getpid()),
            "R42_SERVICE_NAME": spec.name,
            "PYTHONUNBUFFERED": "1",
        }
        if spec.replica:
            # Names its status file, metrics and bus connection apart from its siblings'.
            env["R42_INSTANCE"] = spec.instance
        else:
            env.pop("R42_INSTANCE", None)
        cmd = launch_command(spec.module, spec.args, self.python)
        with path.open("ab") as logfile:
            stamp = datetime.now(UTC).isoformat(timespec="seconds")
            logfile.write(f"--- {stamp} start: python -m {spec.module} ---\n".encode())
            logfile.flush()
            forked = await self._fork(spec, env, path)
            if forked is not None:
                return forked
            return await asyncio.create_subprocess_exec(
                *cmd,
                stdin=subprocess.DEVNULL,
                stdout=logfile,
                stderr=subprocess.STDOUT,
                env=env,
                # Own session: a Ctrl-C at the terminal reaches only `r42 up`, which then
                # stops children in order; killpg also reaches their grandchildren.
                start_new_session=True,
            )

    async def _fork(
        self, spec: ServiceSpec, env: dict[str, str], path: Path
    ) -> ChildProcess | None:
        """The service forked by the fork server, or None to spawn it plainly."""
        server = self.fork_server
        if server is None or spec.module in EAGER_MODULES:
            return None
        from shared.runtime.forking import ForkServerError

        try:
            return await server.spawn(module=spec.module, args=spec.args, env=env, log_path=path)
        except ForkServerError as exc:
            log.warning("fork server failed (%s); services start one by one", exc)
            if self.fork_server is server:
                await self.release_fork_server()
            return None

    async def _run(self, child: _Child, spawned: asyncio.Future[None]) -> None:
        name = child.spec.instance
        tracker = RestartTracker(self.policy)
        try:
            while not self._stopping.is_set():
                try:
                    proc = await self._spawn(child)
                except (OSError, ValueError) as exc:
                    self._emit(SupervisorEvent(name, "gave_up", message=f"cannot start: {exc}"))
                    return
                finally:
                    if not spawned.done():
                        spawned.set_result(None)
                child.proc, child.starts = proc, child.starts + 1
                started = time.monotonic()
                self._emit(SupervisorEvent(name, "started", pid=proc.pid))
                if self._stopping.is_set():
                    self._signal(child, signal.SIGTERM)
                returncode = await proc.wait()
                uptime = time.monotonic() - started
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)  # helpers it left behind
                if self._stopping.is_set():
                    self._emit(
                        SupervisorEvent(name, "stopped", pid=proc.pid, returncode=returncode)
                    )
                    return
                why = describe_exit(returncode)
                tail = log_tail(self.log_path(name))
                self._emit(
                    SupervisorEvent(
                        name, "exited", pid=proc.pid, returncode=returncode, uptime_s=uptime,
                        message=f"{why} after {uptime:.1f} s" + (f": {tail[-1]}" if tail else ""),
                    )
                )  # fmt: skip
                delay = tracker.on_exit(uptime)
                if delay is None:
                    self._emit(
                        SupervisorEvent(
                            name, "gave_up", returncode=returncode,
                            message=f"{tracker.reason}; not restarting it "
                            f"(see {self.log_path(name)})",
                        )
                    )  # fmt: skip
                    return
                self._emit(SupervisorEvent(name, "restarting", delay_s=delay))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stopping.wait(), delay)
        finally:
            if not spawned.done():
                spawned.set_result(None)
