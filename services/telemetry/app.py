"""Wiring of the telemetry service: one durable consumer of llm.call.logged."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from services.telemetry import handlers
from services.telemetry.handlers import CallLog
from shared.bus import LLMCallLogged
from shared.runtime.service import ServiceContext, ServiceSpec, Subscription

DURABLE = "telemetry"


@dataclass(frozen=True)
class TelemetryDeps:
    """The telemetry service's one port: the call log it writes."""

    calls: CallLog


def build(ctx: ServiceContext) -> ServiceSpec[TelemetryDeps]:
    """One durable consumer shared by replicas, writing to the llm_calls collection."""
    deps = TelemetryDeps(calls=ctx.store.llm_calls)
    return ServiceSpec(
        deps=deps,
        subscriptions=[
            Subscription(LLMCallLogged, DURABLE, partial(handlers.on_call_logged, deps.calls),
                         max_workers=4),
        ],
    )  # fmt: skip
