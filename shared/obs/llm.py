"""LLM metrics and spans: a wrapping telemetry sink and a wrapping limiter (no call_llm changes)."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from shared.llm.limiting import Limiter, Permit, model_class, paused_until
from shared.llm.telemetry import LLMCallRecord, TelemetrySink
from shared.obs.metrics import ObsMetrics
from shared.obs.tracing import tracer

if TYPE_CHECKING:
    from opentelemetry.trace import Span

log = logging.getLogger(__name__)


class ObservedSink:
    """Records metrics and a span for each call record, then hands it to the wrapped sink.

    The span is created when the record is emitted (inside call_llm, so its parent is the
    caller's span) with the call's real start and end; the inner sink is called while that
    span is current, so the `llm.call.logged` publish carries it on to the telemetry service.
    """

    def __init__(self, inner: TelemetrySink | None, metrics: ObsMetrics) -> None:
        self.inner = inner
        self._metrics = metrics

    def emit(self, record: LLMCallRecord) -> None:
        """Count the call, open/close its span, then forward."""
        try:
            self._count(record)
        except Exception:  # metrics never fail a call
            log.debug("llm metrics failed", exc_info=True)
        t = tracer()
        if t is None:
            self._forward(record)
            return
        from opentelemetry import context, trace

        end_ns = int(record.occurred_at.timestamp() * 1e9)
        span = t.start_span(f"llm {record.task}", kind=trace.SpanKind.CLIENT,
                            start_time=end_ns - int(record.duration_ms * 1e6))  # fmt: skip
        _describe(span, record)
        token = context.attach(trace.set_span_in_context(span))
        try:
            self._forward(record)
        finally:
            context.detach(token)
            span.end(end_time=end_ns)

    def on_http_error(self, *, model: str, status: int | None) -> None:
        """Count one failed HTTP attempt (a 429 that will be retried shows up here)."""
        label = "connection" if status is None else str(status)
        self._metrics.llm_http_errors.labels(model=model, status=label).inc()

    def _forward(self, record: LLMCallRecord) -> None:
        if self.inner is not None:
            self.inner.emit(record)

    def _count(self, r: LLMCallRecord) -> None:
        m = self._metrics
        outcome = "ok" if r.ok else "error"
        m.llm_calls.labels(task=r.task, model=r.model, provider=r.provider, outcome=outcome).inc()
        m.llm_duration.labels(model=r.model, provider=r.provider).observe(r.duration_ms / 1000)
        for kind, n in (("input", r.input_tokens), ("output", r.output_tokens),
                        ("cache_read", r.cache_read_input_tokens),
                        ("cache_write", r.cache_creation_input_tokens)):  # fmt: skip
            if n:
                m.llm_tokens.labels(model=r.model, kind=kind).inc(n)
        if r.cost_usd:
            m.llm_cost.labels(model=r.model, task=r.task).inc(r.cost_usd)
        if r.cache_read_input_tokens:
            m.llm_cache_hits.labels(model=r.model).inc()


def _describe(span: Span, r: LLMCallRecord) -> None:
    from opentelemetry.trace import Status, StatusCode

    span.set_attributes({
        "gen_ai.system": r.provider, "gen_ai.request.model": r.model,
        "gen_ai.response.model": r.model, "gen_ai.operation.name": "chat",
        "gen_ai.usage.input_tokens": r.input_tokens,
        "gen_ai.usage.output_tokens": r.output_tokens,
        "gen_ai.usage.cache_read_input_tokens": r.cache_read_input_tokens,
        "gen_ai.usage.cache_creation_input_tokens": r.cache_creation_input_tokens,
        "r42.llm.task": r.task, "r42.llm.tier": r.tier, "r42.llm.cost_usd": r.cost_usd,
        "r42.llm.stop_reason": r.stop_reason or "",
    })  # fmt: skip
    if not r.ok:
        span.set_status(Status(StatusCode.ERROR, (r.error_msg or "")[:200]))


class ObservedLimiter:
    """Times every acquire (the wait for the shared budget) and counts 429 pauses."""

    def __init__(self, inner: Limiter, metrics: ObsMetrics) -> None:
        self.inner = inner
        self._metrics = metrics

    async def acquire(self, *, model: str, input_tokens: int, output_tokens: int) -> Permit:
        """Wait for the inner limiter and record how long that took."""
        started = time.perf_counter()
        try:
            return await self.inner.acquire(
                model=model, input_tokens=input_tokens, output_tokens=output_tokens
            )
        finally:
            self._metrics.limiter_wait.labels(model=model_class(model)).observe(
                time.perf_counter() - started
            )

    async def settle(self, permit: Permit, *, input_tokens: int, output_tokens: int) -> None:
        """Forward."""
        await self.inner.settle(permit, input_tokens=input_tokens, output_tokens=output_tokens)

    async def pause(self, *, model: str, until: float) -> None:
        """Count the pause, then forward."""
        self._metrics.limiter_pauses.labels(model=model_class(model)).inc()
        await self.inner.pause(model=model, until=until)

    def paused_until(self, model: str) -> float:
        """Forward (the inner limiter's known pause for the model)."""
        return paused_until(self.inner, model)

    async def aclose(self) -> None:
        """Close the inner limiter when it has something to close."""
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()
