"""What the service host calls: broker middlewares, wrapped sink/limiter, the HTTP endpoint."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shared.config import Settings
from shared.llm.limiting import Limiter
from shared.llm.telemetry import TelemetrySink
from shared.obs.llm import ObservedLimiter, ObservedSink
from shared.obs.metrics import ObsMetrics
from shared.obs.server import Checks, ObsServer
from shared.obs.settings import ObsSettings
from shared.obs.state import install_metrics, uninstall_metrics
from shared.obs.tracing import setup_tracing, shutdown_tracing, tracer_provider

if TYPE_CHECKING:
    from faststream.nats import NatsBroker

    from shared.store import Store

log = logging.getLogger(__name__)


class Observability:
    """One per service process: metrics registry, tracing, and the /metrics endpoint."""

    def __init__(self, name: str, settings: Settings, obs: ObsSettings) -> None:
        self.name = name
        self.settings = obs
        self._data_dir = Path(settings.data_dir)
        self.metrics = ObsMetrics(name)
        install_metrics(self.metrics)
        self._tracing = setup_tracing(
            name, otlp_endpoint=obs.otlp_endpoint, spans_file=obs.traces_file
        )
        self.server: ObsServer | None = None
        self._broker: NatsBroker | None = None
        self._store: Store | None = None
        self._started = False

    @property
    def middlewares(self) -> tuple[Any, ...]:
        """FastStream broker middlewares: tracing (only when on), Prometheus, ingest gauges."""
        from faststream.nats.prometheus import NatsPrometheusMiddleware

        from shared.obs.ingest import IngestProgressMiddleware

        found: list[Any] = []
        provider = tracer_provider()
        if provider is not None:
            from faststream.nats.opentelemetry import NatsTelemetryMiddleware

            found.append(NatsTelemetryMiddleware(tracer_provider=provider))
        found.append(
            NatsPrometheusMiddleware(registry=self.metrics.registry, app_name=f"r42-{self.name}")
        )
        found.append(IngestProgressMiddleware(self.metrics))
        return tuple(found)

    def observe_sink(self, sink: TelemetrySink | None) -> ObservedSink:
        """The sink call_llm gets: metrics and a span per call, then `sink`."""
        return ObservedSink(sink, self.metrics)

    def observe_limiter(self, limiter: Limiter | None) -> Limiter | None:
        """The limiter with its waits timed (None stays None)."""
        return None if limiter is None else ObservedLimiter(limiter, self.metrics)

    async def start(self, *, broker: NatsBroker, store: Store) -> str:
        """Serve /metrics, /healthz, /readyz; ready once `mark_started` ran and checks pass."""
        self._broker, self._store = broker, store
        self.server = ObsServer(
            service=self.name, instance=self.settings.instance or self.name,
            metrics=self.metrics, probe=self._probe, refresh=self._refresh_lag,
            data_dir=self._data_dir, host=self.settings.metrics_host,
            port=self.settings.metrics_port,
        )  # fmt: skip
        return await self.server.start()

    def mark_started(self) -> None:
        """The service's subscribers and rpc responders are all registered."""
        self._started = True
        if self.server is not None:
            self.server.poke()

    async def aclose(self) -> None:
        """Stop serving, flush spans, uninstall the recorder."""
        if self.server is not None:
            try:
                await self.server.stop()
            except Exception:
                log.warning("metrics endpoint did not stop cleanly", exc_info=True)
            self.server = None
        if self._tracing is not None:
            shutdown_tracing(self._tracing)
            self._tracing = None
        uninstall_metrics(self.metrics)

    async def _probe(self) -> Checks:
        from shared.bus import is_connected

        checks: Checks = {}
        broker, store = self._broker, self._store
        checks["nats"] = "ok" if broker is not None and is_connected(broker) else "not connected"
        try:
            if store is None:
                raise RuntimeError("no store")
            await asyncio.wait_for(store.schema_version(), 1.5)
            checks["store"] = "ok"
        except Exception as exc:
            checks["store"] = f"unavailable ({type(exc).__name__})"
        idle = [] if broker is None else [s for s in broker.subscribers if not s.running]
        if not self._started:
            checks["consumers"] = "starting"
        elif idle:
            checks["consumers"] = f"{len(idle)} subscriber(s) not running"
        else:
            checks["consumers"] = "ok"
        return checks

    async def _refresh_lag(self) -> None:
        from shared.bus import jetstream
        from shared.bus.consumer import declared_consumers

        broker = self._broker
        if broker is None:
            return
        js = jetstream(broker)
        for stream, config in declared_consumers(broker):
            name = config.durable_name or config.name or ""
            info = await js.consumer_info(stream, name)
            labels = {"stream": stream, "consumer": name}
            self.metrics.consumer_pending.labels(**labels).set(info.num_pending or 0)
            self.metrics.consumer_ack_pending.labels(**labels).set(info.num_ack_pending or 0)
            self.metrics.consumer_redelivered.labels(**labels).set(info.num_redelivered or 0)


def prepare_obs(name: str, settings: Settings) -> Observability:
    """Read the observability settings and set up metrics and tracing for this process."""
    from pydantic import ValidationError

    from shared.errors import ConfigError
    from shared.store import describe_validation

    try:
        obs = ObsSettings()
    except ValidationError as exc:
        raise ConfigError(f"invalid observability settings: {describe_validation(exc)}") from None
    return Observability(name, settings, obs)
