"""OpenTelemetry tracing: an SDK provider only when an exporter is configured, else nothing.

With neither `OTEL_EXPORTER_OTLP_ENDPOINT` nor a spans file set, no SDK is imported, no
span is created and rpc requests carry no headers: the cost is one boolean check per hop.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SpanExportResult
    from opentelemetry.trace import Tracer

log = logging.getLogger(__name__)

TRACER_NAME = "r42"
_provider: TracerProvider | None = None


def tracing_enabled() -> bool:
    """Whether this process records spans."""
    return _provider is not None


def tracer() -> Tracer | None:
    """R42's tracer, or None when tracing is off."""
    if _provider is None:
        return None
    return _provider.get_tracer(TRACER_NAME)


def tracer_provider() -> TracerProvider | None:
    """The SDK provider (for FastStream's middleware), or None when tracing is off."""
    return _provider


class JsonLinesSpanExporter:
    """Appends each finished span as one JSON line (local debugging and cross-process tests)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Write the spans; an unwritable file fails the export, never the caller."""
        from opentelemetry.sdk.trace.export import SpanExportResult

        lines = [json.dumps(_span_dict(s), default=str) for s in spans]
        try:
            with self._lock, self._path.open("a", encoding="utf-8") as fh:
                fh.write("".join(line + "\n" for line in lines))
        except OSError:
            log.warning("cannot write spans to %s", self._path, exc_info=True)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Nothing to release."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Writes are synchronous."""
        del timeout_millis
        return True


def _span_dict(span: ReadableSpan) -> dict[str, Any]:
    ctx = span.get_span_context()
    parent = span.parent
    return {
        "name": span.name,
        "trace_id": f"{ctx.trace_id:032x}" if ctx else None,
        "span_id": f"{ctx.span_id:016x}" if ctx else None,
        "parent_id": f"{parent.span_id:016x}" if parent else None,
        "service": span.resource.attributes.get("service.name"),
        "kind": span.kind.name,
        "start_ns": span.start_time,
        "end_ns": span.end_time,
        "status": span.status.status_code.name,
        "attributes": dict(span.attributes or {}),
    }


def setup_tracing(
    service: str, *, otlp_endpoint: str | None, spans_file: Path | None
) -> TracerProvider | None:
    """Install a provider exporting to OTLP and/or a file; None (and no SDK) when neither is set."""
    global _provider
    if not otlp_endpoint and spans_file is None:
        return None  # a provider someone else installed in this process stays
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": f"r42-{service}"}))
    if otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        # The exporter reads OTEL_EXPORTER_OTLP_* itself (endpoint + /v1/traces, headers).
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    if spans_file is not None:
        provider.add_span_processor(SimpleSpanProcessor(JsonLinesSpanExporter(spans_file)))  # type: ignore[arg-type]
    _provider = provider
    return provider


def shutdown_tracing(provider: TracerProvider | None = None) -> None:
    """Flush and drop `provider` (default: the installed one) at service stop."""
    global _provider
    provider = provider or _provider
    if provider is _provider:
        _provider = None
    if provider is not None:
        try:
            provider.shutdown()
        except Exception:  # exporting trouble never blocks a shutdown
            log.warning("tracing shutdown failed", exc_info=True)
