"""Every call_llm in a service ends up in llm_calls, once, through the bus."""

from __future__ import annotations

import asyncio

from services.telemetry.app import build
from shared.bus import LLMCallLogged, publish_event
from shared.config import build_settings
from shared.llm import LLMCallRecord, call_llm
from shared.runtime.service import start_service, stop_service


async def test_calls_are_persisted_once(nats_url: str, unique: str, tmp_path) -> None:
    settings = build_settings(nats_url=nats_url, store=f"sqlite:///{tmp_path}/t.db", llm="offline")
    ctx = await start_service("telemetry", build=build, settings=settings, namespace=f"n{unique}")
    try:
        # A real call in this process: the host's bus sink publishes llm.call.logged.
        result = await call_llm(task="smoke", tier="fast", user="Wat is ouderschapsverlof?")
        assert result.text.startswith("[offline]")
        record = LLMCallRecord(task="dup", model="m", tier="fast", duration_ms=1.0, ok=True)
        dup = LLMCallLogged(record=record, actor="test")
        await publish_event(ctx.broker, dup, namespace=ctx.namespace)
        await publish_event(ctx.broker, dup, namespace=ctx.namespace)  # dedupe: one stored row
        for _ in range(200):
            if await ctx.store.llm_calls.count() >= 2:
                break
            await asyncio.sleep(0.05)
        calls = await ctx.store.llm_calls.last(10)
        assert sorted(c.task for c in calls) == ["dup", "smoke"]
    finally:
        await stop_service(ctx)
