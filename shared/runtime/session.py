"""The embedded runtime one `r42 up` owns: data-dir lock, nats-server, state file, supervisor."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import nats
from nats.aio.client import Client as NatsClient
from nats.errors import Error as NatsError
from nats.js.api import ObjectStoreConfig

from shared.bus.auth import NatsAuth
from shared.config import Settings, nats_servers, redact_url
from shared.errors import BusError, ConfigError, R42Error
from shared.runtime.nats_auth import (
    SERVICE_GRANTS,
    SOURCES_BUCKET,
    NatsUser,
    all_users,
    authorization_block,
    inbox_prefix,
)
from shared.runtime.state import (
    NatsNodeState,
    RuntimeLock,
    RuntimeState,
    read_state,
    reap_stale,
    remove_state,
    write_state,
)
from shared.runtime.supervisor import (
    RestartPolicy,
    ServiceSpec,
    Supervisor,
    SupervisorEvent,
    log_tail,
    replicate,
)

if TYPE_CHECKING:
    from shared.runtime.forking import ForkServer

    # Loaded by `r42 up` only: a service imports this module for client_auth and should
    # not pay for the server and readiness helpers.
    from shared.runtime.nodes import NatsNodes

log = logging.getLogger(__name__)

# The one masking rule, under the name the CLI and runtime already use.
display_url = redact_url
_CREDS_ENV = ("NATS_NKEY_SEED", "R42_NATS_NKEY_SEED", "R42_NATS_INBOX_PREFIX")
READY_POLL_S = 0.05
"""Between readiness checks while services start (one connz read, ~5 ms of CPU each)."""


class StoreUnavailableError(R42Error):
    """The configured store cannot be opened (bad URL, unreachable server)."""


def client_auth(settings: Settings, *, user: str = "cli") -> NatsAuth | None:
    """This process's NATS identity: NATS_NKEY_SEED, else the local `r42 up`'s CLI user."""
    if settings.nats_nkey_seed is not None:
        seed = settings.nats_nkey_seed.expanduser()
        if not seed.is_file():
            raise ConfigError(f"NATS_NKEY_SEED {seed} does not exist")
        # `r42 creds NAME` writes NAME.nk, whose inbox is _INBOX_NAME.
        prefix = settings.nats_inbox_prefix or inbox_prefix(seed.stem)
        return NatsAuth(seed, prefix)
    if settings.nats_url:
        return None
    state = read_state(settings.data_dir)
    if state is None or not state.nats_auth or not state.users_dir:
        return None
    seed = Path(state.users_dir) / f"{user}.nk"
    if not seed.is_file():
        raise ConfigError(
            f"the running R42 has no NATS user {user!r} ({seed} is missing); "
            "restart `r42 up` so it writes one"
        )
    return NatsAuth(seed, inbox_prefix(user))


async def connect_nats(
    url: str,
    *,
    timeout: float = 3.0,  # noqa: ASYNC109 - bounds the connect only
    name: str = "r42-cli",
    auth: NatsAuth | None = None,
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
                nats_servers(url), name=name, connect_timeout=int(max(1, timeout)),
                allow_reconnect=False,
                max_reconnect_attempts=1, reconnect_time_wait=0.2, error_cb=remember,
                **(auth.options() if auth else {}),
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


async def check_nats(
    url: str,
    *,
    timeout: float = 3.0,  # noqa: ASYNC109
    auth: NatsAuth | None = None,
) -> None:
    """Raise BusError unless a NATS server answers at `url` (and accepts `auth`)."""
    nc = await connect_nats(url, timeout=timeout, name="r42-probe", auth=auth)
    await nc.close()


class ServicesNotReadyError(R42Error):
    """A service did not answer its readiness check in time (or crash-looped)."""


async def check_store(url: str, *, timeout: float = 10.0) -> None:  # noqa: ASYNC109
    """Open and close the store; raise StoreUnavailableError in one line if that fails.

    A SQLite file is checked as its open would find it, with the standard library (the store
    package costs ~0.15 s of CPU to import, and the services migrate the file on open).
    """
    if url.startswith("sqlite:"):
        from shared.store.sqlite_file import check_sqlite_file, sqlite_path

        try:
            await asyncio.to_thread(check_sqlite_file, sqlite_path(url), timeout_s=timeout)
        except R42Error as exc:
            raise StoreUnavailableError(f"store {redact_url(url)}: {exc}") from None
        return
    from shared.store import open_store  # lazily: the store pulls in its drivers

    try:
        store = await asyncio.wait_for(open_store(url), timeout)
    except TimeoutError:
        raise StoreUnavailableError(
            f"store {redact_url(url)} did not answer within {timeout:.0f} s"
        ) from None
    except R42Error as exc:
        raise StoreUnavailableError(f"store {redact_url(url)}: {exc}") from None
    except Exception as exc:  # a driver's own error: name it, never its full text (secrets)
        raise StoreUnavailableError(
            f"store {redact_url(url)} cannot be opened: {type(exc).__name__}"
        ) from None
    await store.close()


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
        store_url: str | None = None,
        cluster: int = 1,
        replicas: int = 1,
        later: Collection[str] = (),
        fork_server: bool = False,
    ) -> None:
        self.data_dir = Path(data_dir).expanduser().resolve()
        from shared.runtime.nodes import check_cluster_size

        self.store_url = store_url
        self.cluster = check_cluster_size(cluster)
        if nats_url and cluster > 1:
            raise ConfigError("--cluster starts embedded nodes; it cannot be used with NATS_URL")
        self.services = replicate(services, replicas)
        # A staged start: these services (by name) start once the others answer.
        self.later = [s.instance for s in self.services if s.name in later]
        self.first = [s.instance for s in self.services if s.name not in later]
        if not self.first:  # nothing to start before them: one stage
            self.first, self.later = self.later, []
        self.external_url = nats_url
        self.env = dict(os.environ if env is None else env)
        self.policy = policy
        self.on_event = on_event
        self.nats: NatsNodes | None = None
        self.supervisor: Supervisor | None = None
        self.state: RuntimeState | None = None
        self.stream_actions: dict[str, str] | None = None
        self.notes: list[str] = []
        self.users: dict[str, NatsUser] = {}
        self._lock: RuntimeLock | None = None
        self._stopping = False
        self.use_fork_server = fork_server
        self._forks: ForkServer | None = None

    @property
    def logs_dir(self) -> Path:
        """Where each service's log file goes."""
        return self.data_dir / "logs"

    @property
    def nats_store(self) -> Path:
        """The embedded nats-server's directory (JetStream store, ports file, log, users)."""
        return self.data_dir / "nats"

    @property
    def users_dir(self) -> Path:
        """Each NATS user's seed (0600) and the external clients' roles."""
        return self.nats_store / "users"

    @property
    def stream_replicas(self) -> int:
        """Replicas of every stream and bucket: 1 on one node, 3 on a cluster."""
        return self.nats.replicas if self.nats is not None else 1

    async def start(self) -> RuntimeState:
        """Lock the data dir, start or check NATS, ensure streams, write state, start services."""
        if self.data_dir.exists() and not self.data_dir.is_dir():
            raise ConfigError(f"data dir {self.data_dir} exists and is not a directory")
        if self.external_url:
            await check_nats(self.external_url)
        embedded = bool(self.store_url) and str(self.store_url).startswith("sqlite:")
        if self.store_url and not embedded:  # a remote store: nothing starts before it answers
            await check_store(self.store_url)
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(f"cannot create data dir {self.data_dir}: {exc.strerror}") from None
        self._lock = RuntimeLock(self.data_dir).acquire()
        # The embedded SQLite file is checked while NATS starts, and gates the services.
        checked = (
            asyncio.create_task(check_store(self.store_url))
            if self.store_url and embedded else None
        )  # fmt: skip
        try:
            await self._start_locked(checked)
        except BaseException:
            if checked is not None and not checked.done():
                checked.cancel()
                with contextlib.suppress(BaseException):
                    await checked
            await self.stop()
            raise
        assert self.state is not None
        return self.state

    def _start_fork_server(self) -> None:
        """Adopt the fork server `r42 up` started early, or start one: it imports meanwhile."""
        from shared.runtime.forking import ForkServer, adopt_early

        self._forks = adopt_early()
        if self._forks is None:
            env = {k: v for k, v in self.env.items() if k not in {"R42_NATS_URL", *_CREDS_ENV}}
            self._forks = ForkServer.start(
                python=sys.executable, env=env, log_path=self.logs_dir / "fork-server.log"
            )

    async def _start_locked(self, checked: asyncio.Task[None] | None = None) -> None:
        if self.use_fork_server:
            self._start_fork_server()
        stale = read_state(self.data_dir)
        if stale is not None:
            for what in await asyncio.to_thread(reap_stale, stale):
                self.notes.append(f"stopped {what} left behind by an earlier run")
        if self.external_url:
            url = self.external_url
        else:
            from shared.runtime.nodes import NatsNodes

            self.nats = NatsNodes(
                self.nats_store, size=self.cluster, authorization=self._authorization,
                on_event=self._on_event, policy=self.policy,
            )  # fmt: skip
            await self.nats.start()
            self.notes.extend(self.nats.notes)
            url = self.nats.url
            # Only our own server: an external cluster's streams (replicas, limits) belong to
            # its operators, and the services ensure what they need when they connect.
            self.stream_actions = await self._ensure_streams(url)
        self.state = RuntimeState(
            pid=os.getpid(), data_dir=str(self.data_dir), nats_url=url,
            logs_dir=str(self.logs_dir), nats_auth=self.nats is not None,
            users_dir=str(self.users_dir) if self.nats else None,
            nats_store=str(self.nats_store) if self.nats else None,
            stream_replicas=self.stream_replicas,
        )  # fmt: skip
        self._refresh_nodes()
        write_state(self.data_dir, self.state)
        drop = {"R42_NATS_URL", *(_CREDS_ENV if self.nats else ())}
        env = {k: v for k, v in self.env.items() if k not in drop}
        env.update(NATS_URL=url, R42_DATA_DIR=str(self.data_dir))
        if self.nats is not None:
            env["R42_NATS_REPLICAS"] = str(self.stream_replicas)
        service_env = {
            name: {
                "NATS_NKEY_SEED": str(user.seed_file),
                "R42_NATS_INBOX_PREFIX": user.inbox_prefix,
            }
            for name, user in self.users.items()
            if any(spec.name == name for spec in self.services)
        }
        self.supervisor = Supervisor(
            self.services, log_dir=self.logs_dir, env=env, policy=self.policy,
            on_event=self._on_event, service_env=service_env, fork_server=self._forks,
        )  # fmt: skip
        self._forks = None  # the supervisor owns it now
        if checked is not None:
            await checked  # StoreUnavailableError: no service starts on a store that fails
        await self.supervisor.start(self.first)
        if not self.later:
            await self.supervisor.release_fork_server()
        if self.nats is not None:
            self.nats.supervise()
        self._save()

    async def start_later(self) -> None:
        """Start the later stage (no-op once stopping, or when everything runs already)."""
        if self._stopping or self.supervisor is None:
            return
        await self.supervisor.start(self.later)
        await self.supervisor.release_fork_server()
        self._save()

    def _authorization(self) -> str:
        # Re-read on every (re)start: `r42 creds` may have added clients meanwhile.
        # Every known service gets its user, started or not: `r42 gateway` may join later.
        names = list(dict.fromkeys([*SERVICE_GRANTS, *(spec.name for spec in self.services)]))
        users = all_users(self.users_dir, names)
        self.users = {u.name: u for u in users}
        return authorization_block(users)

    def _refresh_nodes(self) -> None:
        """Copy each node's pid and URLs into the state (a restarted node has a new pid)."""
        if self.state is None or self.nats is None:
            return
        nodes = [
            NatsNodeState(
                name=node.name,
                pid=self.nats.pid_of(node.index),
                url=node.server.url,
                monitor_url=node.server.monitor_url,
                store=str(node.store),
            )
            for node in self.nats.nodes
        ]
        self.state.nats_nodes = nodes
        first = nodes[0] if nodes else None
        self.state.nats_pid = first.pid if first else None
        self.state.nats_monitor_url = first.monitor_url if first else None
        url = self.nats.url
        if url and url != self.state.nats_url:
            self.notes.append(f"NATS came back on new ports: {url}")
            self.state.nats_url = url

    def readiness(self, names: Sequence[str] | None = None) -> dict[str, bool]:
        """name → whether the service answers: on the bus as the nats-server sees it (our own
        server), and on its `/readyz` (see shared.runtime.readiness)."""
        from shared.runtime.readiness import ready_services, readyz

        names = [spec.instance for spec in self.services] if names is None else list(names)
        pids = self.supervisor.pids if self.supervisor else {}
        if self.nats is not None and self.nats.monitor_urls:
            bus = ready_services(self.nats.monitor_urls, self.users, names)
        else:  # an external NATS: its monitor is not ours to ask
            bus = dict.fromkeys(names, True)
        waiting = [name for name in names if bus[name] and name in pids]
        probed = readyz(self.data_dir, pids, waiting)
        return {name: probed.get(name, False) for name in names}

    async def wait_ready(
        self,
        *,
        timeout: float = 60.0,  # noqa: ASYNC109
        names: Sequence[str] | None = None,
    ) -> dict[str, bool]:
        """Wait until these services (default: all) are ready; raise naming those that are not."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            ready = await asyncio.to_thread(self.readiness, names)
            if self.state is not None:
                # Every instance keeps an entry: one of a later stage reads False until it answers.
                self.state.ready = {**self.state.ready, **ready}
                self._save()
            if all(ready.values()):
                return ready
            gave_up = [e.service for e in (self.supervisor.events if self.supervisor else [])
                       if e.kind == "gave_up" and e.service in ready]  # fmt: skip
            if gave_up or loop.time() > deadline:
                late = sorted(n for n, ok in ready.items() if not ok)
                why = f"{', '.join(late)} did not become ready"
                why += " (crash loop)" if gave_up else f" within {timeout:.0f} s"
                for name in late:
                    tail = log_tail(self.logs_dir / f"{name}.log", lines=1)
                    if tail:
                        why += f"; {name}: {tail[-1]}"
                raise ServicesNotReadyError(why)
            await asyncio.sleep(READY_POLL_S)

    async def _ensure_streams(self, url: str) -> dict[str, str]:
        from shared.bus import ensure_streams  # lazily: the bus pulls in FastStream

        runtime = self.users.get("runtime")
        auth = NatsAuth(runtime.seed_file, runtime.inbox_prefix) if runtime else None
        nc = await connect_nats(url, timeout=5.0, name="r42-up", auth=auth)
        try:
            replicas = self.stream_replicas
            js = nc.jetstream()
            actions: dict[str, str] = dict(await ensure_streams(js, replicas=replicas))
            # The bucket uploaders put source files into (`r42 creds NAME --role uploader`).
            await js.create_object_store(SOURCES_BUCKET, ObjectStoreConfig(replicas=replicas))
            return actions
        finally:
            await nc.close()

    def add_client_reload(self) -> None:
        """Re-read the users (a new `r42 creds` client) and reload the running server."""
        if self.nats is not None:
            self.nats.reload()

    def _save(self) -> None:
        if self.state is None or self.supervisor is None:
            return
        self._refresh_nodes()
        self.state.services = self.supervisor.pids
        self.state.pending = self.supervisor.pending
        nats = self.nats.restarts if self.nats else {}
        self.state.restarts = {**self.supervisor.restarts, **nats}
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
        if self._forks is not None:
            self._forks.kill()

    async def stop(self) -> None:
        """Stop services, then the nats-server we started; remove the state file; unlock."""
        self._stopping = True
        # Keep self.supervisor set while stopping: a second Ctrl-C calls kill() on it.
        if self.supervisor is not None:
            await self.supervisor.stop()
            self.supervisor = None
        forks, self._forks = self._forks, None
        if forks is not None:  # the start failed before a supervisor took it over
            await forks.close()
        nodes, self.nats = self.nats, None
        if nodes is not None:
            await nodes.stop()
        lock, self._lock = self._lock, None
        if lock is not None:
            remove_state(self.data_dir, owner_pid=os.getpid())
            lock.release()
