"""The embedded runtime one `r42 up` owns: data-dir lock, nats-server, state file, supervisor."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import nats
from nats.aio.client import Client as NatsClient
from nats.errors import Error as NatsError

from shared.config import redact_url
from shared.errors import BusError, ConfigError
from shared.runtime.nats_server import EmbeddedNatsServer
from shared.runtime.state import (
    RuntimeLock,
    RuntimeState,
    read_state,
    reap_stale,
    remove_state,
    write_state,
)
from shared.runtime.supervisor import RestartPolicy, ServiceSpec, Supervisor, SupervisorEvent

log = logging.getLogger(__name__)

# The one masking rule, under the name the CLI and runtime already use.
display_url = redact_url


async def connect_nats(
    url: str,
    *,
    timeout: float = 3.0,  # noqa: ASYNC109 - bounds the connect only
    name: str = "r42-cli",
) -> NatsClient:
    """One connection without reconnects; raise BusError with a secret-free message."""
    seen: list[BaseException] = []

    async def remember(exc: Exception) -> None:
        # nats-py would log every failed attempt; we report the last one, once.
        seen.append(exc)

    try:
        # max_reconnect_attempts=1: with 0, nats-py's server selection retries forever.
        return await asyncio.wait_for(
            nats.connect(
                url, name=name, connect_timeout=int(max(1, timeout)), allow_reconnect=False,
                max_reconnect_attempts=1, reconnect_time_wait=0.2, error_cb=remember,
            ),
            timeout + 2.0,
        )  # fmt: skip
    except (OSError, NatsError, TimeoutError, ValueError) as exc:
        cause = seen[-1] if seen else exc
        if isinstance(cause, OSError) and cause.errno:
            reason = os.strerror(cause.errno)  # asyncio's own text omits "refused" etc.
        else:
            reason = str(cause).strip() or type(cause).__name__
        reason = display_url(reason.replace(url, display_url(url)))
        raise BusError(f"cannot reach NATS at {display_url(url)}: {reason}") from None


async def check_nats(url: str, *, timeout: float = 3.0) -> None:  # noqa: ASYNC109
    """Raise BusError unless a NATS server answers at `url`."""
    nc = await connect_nats(url, timeout=timeout, name="r42-probe")
    await nc.close()


class EmbeddedRuntime:
    """Start/stop the pieces of `r42 up` in order, and roll back whatever started on failure."""

    def __init__(
        self,
        *,
        data_dir: Path,
        services: Sequence[ServiceSpec],
        nats_url: str | None = None,
        env: Mapping[str, str] | None = None,
        policy: RestartPolicy | None = None,
        on_event: Callable[[SupervisorEvent], None] | None = None,
    ) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        self.services = tuple(services)
        self.external_url = nats_url
        self.env = dict(os.environ if env is None else env)
        self.policy = policy
        self.on_event = on_event
        self.server: EmbeddedNatsServer | None = None
        self.supervisor: Supervisor | None = None
        self.state: RuntimeState | None = None
        self.stream_actions: dict[str, str] | None = None
        self.notes: list[str] = []
        self._lock: RuntimeLock | None = None

    @property
    def logs_dir(self) -> Path:
        """Where each service's log file goes."""
        return self.data_dir / "logs"

    @property
    def nats_store(self) -> Path:
        """The embedded nats-server's directory (JetStream store, ports file, log)."""
        return self.data_dir / "nats"

    async def start(self) -> RuntimeState:
        """Lock the data dir, start or check NATS, ensure streams, write state, start services."""
        if self.data_dir.exists() and not self.data_dir.is_dir():
            raise ConfigError(f"data dir {self.data_dir} exists and is not a directory")
        if self.external_url:
            await check_nats(self.external_url)
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create data dir {self.data_dir}: {exc.strerror}") from None
        self._lock = RuntimeLock(self.data_dir).acquire()
        try:
            await self._start_locked()
        except BaseException:
            await self.stop()
            raise
        assert self.state is not None
        return self.state

    async def _start_locked(self) -> None:
        stale = read_state(self.data_dir)
        if stale is not None:
            for what in await asyncio.to_thread(reap_stale, stale):
                self.notes.append(f"stopped {what} left behind by an earlier run")
        if self.external_url:
            url = self.external_url
        else:
            self.server = EmbeddedNatsServer(self.nats_store)
            await asyncio.to_thread(self.server.start)
            url = self.server.url
            # Only our own server: an external cluster's streams (replicas, limits) belong to
            # its operators, and the services ensure what they need when they connect.
            self.stream_actions = await self._ensure_streams(url)
        proc = self.server.proc if self.server else None
        self.state = RuntimeState(
            pid=os.getpid(),
            data_dir=str(self.data_dir),
            nats_url=url,
            nats_monitor_url=self.server.monitor_url if self.server else None,
            nats_pid=proc.pid if proc else None,
            nats_store=str(self.nats_store) if self.server else None,
            logs_dir=str(self.logs_dir),
        )
        write_state(self.data_dir, self.state)
        env = {k: v for k, v in self.env.items() if k != "R42_NATS_URL"}
        env.update(NATS_URL=url, R42_DATA_DIR=str(self.data_dir))
        self.supervisor = Supervisor(
            self.services, log_dir=self.logs_dir, env=env, policy=self.policy,
            on_event=self._on_event,
        )  # fmt: skip
        await self.supervisor.start()
        self._save()

    async def _ensure_streams(self, url: str) -> dict[str, str]:
        from shared.bus import ensure_streams  # lazily: the bus pulls in FastStream

        nc = await connect_nats(url, timeout=5.0, name="r42-up")
        try:
            return dict(await ensure_streams(nc.jetstream()))
        finally:
            await nc.close()

    def _save(self) -> None:
        if self.state is None or self.supervisor is None:
            return
        self.state.services = self.supervisor.pids
        try:
            write_state(self.data_dir, self.state)
        except OSError as exc:
            log.warning("could not update %s: %s", self.data_dir, exc.strerror)

    def _on_event(self, event: SupervisorEvent) -> None:
        self._save()
        if self.on_event is not None:
            self.on_event(event)

    def kill(self) -> None:
        """SIGKILL every child now (a second Ctrl-C while stopping)."""
        if self.supervisor is not None:
            self.supervisor.kill()

    async def stop(self) -> None:
        """Stop services, then the nats-server we started; remove the state file; unlock."""
        # Keep self.supervisor set while stopping: a second Ctrl-C calls kill() on it.
        if self.supervisor is not None:
            await self.supervisor.stop()
            self.supervisor = None
        server, self.server = self.server, None
        if server is not None:
            await asyncio.to_thread(server.stop)
        lock, self._lock = self._lock, None
        if lock is not None:
            remove_state(self.data_dir, owner_pid=os.getpid())
            lock.release()
