"""Metrics and trace context for core-NATS request/reply (FastStream's middlewares don't see it)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

from shared.obs.state import current_metrics
from shared.obs.tracing import tracer


@dataclass
class RpcObservation:
    """One request in flight: headers to send (client side) and the outcome to record."""

    headers: dict[str, str] | None = None
    outcome: str = "ok"


@contextmanager
def observe_rpc_client(subject: str) -> Iterator[RpcObservation]:
    """Time a request; with tracing on, a CLIENT span whose context goes into the headers."""
    obs = RpcObservation()
    started = time.perf_counter()
    t = tracer()
    try:
        if t is None:
            yield obs
        else:
            from opentelemetry import propagate, trace

            with t.start_as_current_span(f"{subject} request", kind=trace.SpanKind.CLIENT,
                                         attributes=_attrs(subject)) as span:  # fmt: skip
                obs.headers = {}
                propagate.inject(obs.headers)
                try:
                    yield obs
                finally:
                    span.set_attribute("r42.rpc.outcome", obs.outcome)
    except BaseException as exc:
        if obs.outcome == "ok":
            obs.outcome = _failure(exc)
        raise
    finally:
        _record("client", subject, obs.outcome, started)


@contextmanager
def observe_rpc_server(subject: str, headers: Mapping[str, str] | None) -> Iterator[RpcObservation]:
    """Time an answer; with tracing on, a SERVER span continuing the caller's trace."""
    obs = RpcObservation()
    started = time.perf_counter()
    t = tracer()
    try:
        if t is None:
            yield obs
        else:
            from opentelemetry import propagate, trace

            parent = propagate.extract(dict(headers or {}))
            with t.start_as_current_span(subject, context=parent, kind=trace.SpanKind.SERVER,
                                         attributes=_attrs(subject)) as span:  # fmt: skip
                try:
                    yield obs
                finally:
                    span.set_attribute("r42.rpc.outcome", obs.outcome)
    except BaseException as exc:  # cancelled at shutdown, or the reply could not be built
        if obs.outcome == "ok":
            obs.outcome = _failure(exc)
        raise
    finally:
        _record("server", subject, obs.outcome, started)


def _failure(exc: BaseException) -> str:
    """The outcome of a request that ended without a reply (the same from every call site)."""
    from nats.errors import NoRespondersError

    from shared.bus.rpc import NoResponderError, RpcTimeoutError

    if isinstance(exc, TimeoutError | RpcTimeoutError):
        return "timeout"
    if isinstance(exc, NoRespondersError | NoResponderError):
        return "no_responder"
    if isinstance(exc, asyncio.CancelledError):
        return "cancelled"
    return type(exc).__name__  # BusError, ...


def _attrs(subject: str) -> dict[str, str]:
    return {"messaging.system": "nats", "messaging.destination.name": subject}


def _record(side: str, subject: str, outcome: str, started: float) -> None:
    metrics = current_metrics()
    if metrics is None:
        return
    hist = metrics.rpc_client if side == "client" else metrics.rpc_server
    hist.labels(subject=subject, outcome=outcome).observe(time.perf_counter() - started)
