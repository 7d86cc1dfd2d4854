"""The embedded nats-server(s) of one `r42 up`: one node, or a loopback JetStream cluster.

A cluster node keeps its client and route ports and its store across restarts (in
`<nats>/node-<i>/ports.json`): its peers' routes and the clients' server lists name those
ports, and its JetStream replicas live in that store.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from shared.errors import ConfigError
from shared.runtime.nats_server import (
    ClusterRoutes,
    EmbeddedNatsServer,
    NatsServerError,
    free_port,
    port_free,
)
from shared.runtime.supervisor import (
    EventKind,
    RestartPolicy,
    RestartTracker,
    SupervisorEvent,
    describe_exit,
    log_tail,
)

log = logging.getLogger(__name__)

CLUSTER_NAME = "r42"
CLUSTER_SIZES = (1, 3, 5)
"""JetStream needs a majority of its nodes: an odd number of at least three, or one."""
ROUTE_USER = "route"
OnEvent = Callable[[SupervisorEvent], None]


def stream_replicas(size: int) -> int:
    """Replicas per stream and bucket on a cluster of `size` nodes: R1 alone, R3 clustered."""
    return 1 if size == 1 else 3


def check_cluster_size(size: int) -> int:
    """Validate `--cluster N`."""
    if size not in CLUSTER_SIZES:
        raise ConfigError(f"--cluster must be one of {', '.join(map(str, CLUSTER_SIZES))}")
    return size


@dataclass
class _Node:
    index: int
    store: Path
    server: EmbeddedNatsServer
    restarts: int = 0
    task: asyncio.Task[None] | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return (
            "nats" if self.index == 0 and self.server.cluster is None else f"nats-{self.index + 1}"
        )


class NatsNodes:
    """Start, supervise (restart on the same ports and store) and stop the embedded server(s)."""

    def __init__(
        self,
        nats_dir: Path,
        *,
        size: int,
        authorization: Callable[[], str],
        on_event: OnEvent,
        policy: RestartPolicy | None = None,
    ) -> None:
        self.nats_dir = Path(nats_dir)
        self.size = check_cluster_size(size)
        self.authorization = authorization
        self.on_event = on_event
        self.policy = policy or RestartPolicy()
        self.nodes: list[_Node] = []
        self.notes: list[str] = []
        self._stopping = False

    @property
    def clustered(self) -> bool:
        """Whether this is a JetStream cluster (routes, R3) rather than one server."""
        return self.size > 1

    @property
    def replicas(self) -> int:
        """Replicas each stream and bucket gets."""
        return stream_replicas(self.size)

    @property
    def url(self) -> str:
        """The client URL list (comma-separated, as NATS_URL takes it)."""
        return ",".join(n.server.url for n in self.nodes if n.server.url)

    @property
    def monitor_urls(self) -> list[str]:
        """Each node's monitoring endpoint."""
        return [n.server.monitor_url for n in self.nodes if n.server.monitor_url]

    @property
    def restarts(self) -> dict[str, int]:
        """node name → restarts so far."""
        return {n.name: n.restarts for n in self.nodes}

    def _store(self, index: int) -> Path:
        return self.nats_dir if not self.clustered else self.nats_dir / f"node-{index + 1}"

    def _ports_file(self, index: int) -> Path:
        # The single node keeps its historic file (clients of an earlier run find it again).
        return self.nats_dir / "port" if not self.clustered else self._store(index) / "ports.json"

    def _saved_ports(self, index: int) -> tuple[int | None, int | None]:
        try:
            text = self._ports_file(index).read_text().strip()
        except OSError:
            return None, None
        if not self.clustered:
            return (int(text) if text.isdigit() and 0 < int(text) < 65536 else None), None
        try:
            raw = json.loads(text)
            client, route = int(raw["client"]), int(raw["route"])
        except (ValueError, KeyError, TypeError):
            return None, None
        return client, route

    def _save_ports(self, node: _Node) -> None:
        port = node.server.port_number
        if port is None:
            return
        if node.server.cluster is None:
            self._ports_file(node.index).write_text(f"{port}\n")
        else:
            route = node.server.cluster.route_port
            self._ports_file(node.index).write_text(json.dumps({"client": port, "route": route}))

    def _route_secret(self) -> str:
        path = self.nats_dir / "cluster.secret"
        try:
            secret = path.read_text().strip()
        except FileNotFoundError:
            secret = ""
        if len(secret) < 32:
            secret = secrets.token_hex(24)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(secret)
        return secret

    def _plan(self) -> list[_Node]:
        """Each node's store and ports: the saved ones while free, else fresh ones."""
        taken: set[int] = set()

        def pick(saved: int | None) -> int:
            port = saved if saved and saved not in taken and port_free(saved) else free_port()
            while port in taken:
                port = free_port()
            taken.add(port)
            return port

        saved = [self._saved_ports(i) for i in range(self.size)]
        if not self.clustered:
            store = self._store(0)
            server = EmbeddedNatsServer(store, port=saved[0][0], authorization=self.authorization())
            return [_Node(0, store, server)]
        clients = [pick(c) for c, _ in saved]
        routes = [pick(r) for _, r in saved]
        secret = self._route_secret()
        nodes = []
        for i in range(self.size):
            store = self._store(i)
            cluster = ClusterRoutes(
                name=CLUSTER_NAME, server_name=f"{CLUSTER_NAME}-{i + 1}", route_port=routes[i],
                peer_ports=tuple(p for j, p in enumerate(routes) if j != i), user=ROUTE_USER,
                password=secret,
            )  # fmt: skip
            server = EmbeddedNatsServer(
                store, port=clients[i], authorization=self.authorization(), cluster=cluster
            )
            nodes.append(_Node(i, store, server))
        return nodes

    async def start(self) -> None:
        """Start every node and wait until each is healthy (a cluster: current with its leader)."""
        self.nats_dir.mkdir(parents=True, exist_ok=True)
        self.nodes = self._plan()
        # Spawned on this (the main) thread: the parent-death signal is tied to the thread
        # that forked the server, and a worker thread may end long before `r42 up` does.
        for node in self.nodes:
            node.store.mkdir(parents=True, exist_ok=True)
            node.server.spawn(die_with_parent=True)
        # Together: a cluster node is healthy only once a majority of its peers is up.
        await asyncio.gather(*(asyncio.to_thread(n.server.wait_healthy) for n in self.nodes))
        for node in self.nodes:
            self._save_ports(node)
            if node.server.port != node.server.port_number:
                self.notes.append(
                    f"{node.name}: port {node.server.port} was taken; now {node.server.url}"
                )

    def supervise(self) -> None:
        """Start one restart loop per node."""
        for node in self.nodes:
            node.task = asyncio.create_task(self._supervise(node), name=node.name)

    def reload(self) -> None:
        """Re-read the users and make every running node reload them (SIGHUP)."""
        block = self.authorization()
        for node in self.nodes:
            node.server.reload(block)

    def pid_of(self, index: int) -> int | None:
        """The live pid of node `index`."""
        proc = self.nodes[index].server.proc
        return proc.pid if proc is not None and proc.poll() is None else None

    async def _supervise(self, node: _Node) -> None:
        tracker = RestartTracker(self.policy)
        loop = asyncio.get_running_loop()
        while not self._stopping:
            server = node.server
            proc = server.proc
            if proc is None:
                return
            started = loop.time()
            code = await asyncio.to_thread(proc.wait)
            if self._stopping:
                return
            uptime = loop.time() - started
            tail = log_tail(server.log_path, lines=1)
            self._emit(node, "exited", proc.pid, f"{describe_exit(code)} after {uptime:.1f} s"
                       + (f": {tail[-1]}" if tail else ""))  # fmt: skip
            delay = tracker.on_exit(uptime)
            if delay is None:
                self._emit(node, "gave_up", None, f"{tracker.reason}; not restarting it")
                return
            self._emit(node, "restarting", None, f"in {delay:g} s", delay=delay)
            await asyncio.sleep(delay)
            if self._stopping:
                return
            # Same ports, same store: peers' routes and clients' server lists name them.
            server.port = server.port_number or server.port
            server.authorization = self.authorization()
            try:
                server.spawn(die_with_parent=True)
                await asyncio.to_thread(server.wait_healthy)
            except (NatsServerError, ConfigError, OSError) as exc:
                self._emit(node, "exited", None, f"restart failed: {exc}")
                continue
            node.restarts += 1
            self._save_ports(node)
            new = server.proc
            self._emit(node, "started", new.pid if new else None, server.url)

    def _emit(
        self,
        node: _Node,
        kind: EventKind,
        pid: int | None,
        message: str,
        *,
        delay: float | None = None,
    ) -> None:
        self.on_event(SupervisorEvent(node.name, kind, pid=pid, message=message, delay_s=delay))

    async def stop(self) -> None:
        """Stop every node (SIGTERM, then SIGKILL) and end the restart loops."""
        self._stopping = True
        await asyncio.gather(*(asyncio.to_thread(n.server.stop) for n in self.nodes))
        tasks = [n.task for n in self.nodes if n.task is not None]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
