"""The per-process HTTP endpoint: /metrics (Prometheus), /healthz (alive), /readyz (ready)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from shared.errors import ConfigError
from shared.obs.http import Answer, serve_http
from shared.obs.metrics import ObsMetrics
from shared.obs.status import ServiceStatus, remove_status, write_status

log = logging.getLogger(__name__)

Checks = dict[str, str]
"""check name → "ok" or why it fails."""
ReadyProbe = Callable[[], Awaitable[Checks]]
Refresh = Callable[[], Awaitable[None]]

STATUS_INTERVAL_S = 2.0
REFRESH_TIMEOUT_S = 2.0


class ObsServer:
    """Serves the three endpoints and keeps `<data>/run/<instance>.json` current."""

    def __init__(
        self,
        *,
        service: str,
        instance: str,
        metrics: ObsMetrics,
        probe: ReadyProbe,
        refresh: Refresh | None,
        data_dir: Path,
        host: str,
        port: int,
    ) -> None:
        self.service, self.instance = service, instance
        self._metrics, self._probe, self._refresh = metrics, probe, refresh
        self._data_dir, self._host, self._port = data_dir, host, port
        self._server: asyncio.Server | None = None
        self._watch: asyncio.Task[None] | None = None
        self._started_at = datetime.now(UTC)
        self._last: tuple[bool, Checks] | None = None
        self._poked = asyncio.Event()
        self.url = ""

    async def start(self) -> str:
        """Bind (port 0 = a free one), write the status file, watch readiness; returns the URL."""
        routes = {
            "/metrics": self._serve_metrics,
            "/healthz": self._serve_healthz,
            "/readyz": self._serve_readyz,
        }
        try:
            server = await serve_http(self._host, self._port, routes)
        except OSError as exc:
            raise ConfigError(
                f"cannot serve metrics on {self._host}:{self._port} ({exc.strerror or exc}); "
                "set R42_METRICS_PORT to a free port, or 0 to pick one"
            ) from None
        self._server = server
        host, port = server.sockets[0].getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{port}"
        await self._update()
        self._watch = asyncio.create_task(self._watch_loop())
        log.info("%s metrics at %s/metrics", self.service, self.url)
        return self.url

    async def stop(self) -> None:
        """Stop serving and remove this process's status file."""
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
            self._watch = None
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
            remove_status(self._data_dir, self.instance, pid=os.getpid())

    async def check(self) -> tuple[bool, Checks]:
        """Run the readiness probe (a crashing probe means not ready, with the reason)."""
        try:
            checks = await asyncio.wait_for(self._probe(), REFRESH_TIMEOUT_S)
        except Exception as exc:
            checks = {"probe": f"failed: {type(exc).__name__}"}
        ready = bool(checks) and all(v == "ok" for v in checks.values())
        self._metrics.ready.set(1 if ready else 0)
        return ready, checks

    async def _update(self) -> None:
        state = await self.check()
        if state == self._last:
            return
        self._last = state
        ready, checks = state
        write_status(self._data_dir, ServiceStatus(
            service=self.service, instance=self.instance, pid=os.getpid(),
            metrics_url=f"{self.url}/metrics", healthz_url=f"{self.url}/healthz",
            readyz_url=f"{self.url}/readyz", ready=ready, checks=checks,
            started_at=self._started_at,
        ))  # fmt: skip

    def poke(self) -> None:
        """Re-check readiness now (the service just finished starting)."""
        self._poked.set()

    async def _watch_loop(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._poked.wait(), STATUS_INTERVAL_S)
            self._poked.clear()
            try:
                await self._update()
            except Exception:  # the status file is advisory; serving goes on
                log.warning("cannot update the status file", exc_info=True)

    async def _serve_metrics(self) -> Answer:
        if self._refresh is not None:
            try:
                await asyncio.wait_for(self._refresh(), REFRESH_TIMEOUT_S)
            except Exception as exc:  # stale gauges beat a failed scrape
                log.debug("metrics refresh failed: %s", type(exc).__name__)
        return 200, CONTENT_TYPE_LATEST, generate_latest(self._metrics.registry)

    async def _serve_healthz(self) -> Answer:
        # Answering at all means the event loop runs.
        return _json(200, {"status": "ok", "service": self.service})

    async def _serve_readyz(self) -> Answer:
        ready, checks = await self.check()
        body = {"ready": ready, "service": self.service, "checks": checks}
        return _json(200 if ready else 503, body)


def _json(status: int, body: dict[str, object]) -> Answer:
    return status, "application/json; charset=utf-8", json.dumps(body).encode()
