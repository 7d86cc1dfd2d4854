"""`r42 up`'s readiness gate asks each service's own /readyz, from the status file it wrote."""

from __future__ import annotations

import http.server
import os
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from shared.obs.status import ServiceStatus, write_status
from shared.runtime.readiness import readyz


class _Probe(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        code = 200 if self.path == "/up/readyz" else 503
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def probe() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Probe)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _status(data: Path, instance: str, pid: int, base: str) -> None:
    write_status(data, ServiceStatus(
        service=instance.partition(".")[0], instance=instance, pid=pid,
        metrics_url=f"{base}/metrics", healthz_url=f"{base}/healthz", readyz_url=f"{base}/readyz",
        ready=True, started_at=datetime.now(UTC),
    ))  # fmt: skip


def test_the_gate_believes_only_a_live_processs_own_probe(tmp_path: Path, probe: str) -> None:
    me = os.getpid()
    _status(tmp_path, "r42", me, f"{probe}/up")  # answers 200
    _status(tmp_path, "quiz", me, f"{probe}/down")  # answers 503
    _status(tmp_path, "content", me - 1 if me > 2 else me + 1, f"{probe}/up")  # an earlier pid's
    _status(tmp_path, "extractor", me, "http://127.0.0.1:9/readyz")  # nobody listens
    pids = {"r42": me, "quiz": me, "content": me, "extractor": me, "telemetry": me, "kid": me}
    names = ["r42", "quiz", "content", "extractor", "telemetry", "kid", "r42.2"]
    ready = readyz(tmp_path, pids, names)
    assert ready == {
        "r42": True,
        "quiz": False,  # its probe says 503 (say, its store is down)
        "content": False,  # the status file is stale: not this process's
        "extractor": False,  # the probe does not answer
        "telemetry": False,  # no status file yet: still starting
        "kid": True,  # a custom service serves no probe: ready once it runs
        "r42.2": False,  # not running
    }
