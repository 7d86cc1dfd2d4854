"""Wiring of the telemetry service."""

from __future__ import annotations

from services.telemetry.handlers import store_call
from shared.bus import LLMCallLogged, subscribe_event
from shared.runtime.service import ServiceContext

DURABLE = "telemetry"


async def register(ctx: ServiceContext) -> None:
    """Subscribe to llm.call.logged with one durable consumer shared by replicas."""

    async def on_call(event: LLMCallLogged) -> None:
        await store_call(event, store=ctx.store)

    subscribe_event(
        ctx.broker, LLMCallLogged, durable=DURABLE, handler=on_call, namespace=ctx.namespace,
        max_workers=4,
    )  # fmt: skip
