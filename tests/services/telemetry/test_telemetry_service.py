"""Every call_llm in a service ends up in llm_calls, once, through the bus."""

from __future__ import annotations

import asyncio
import json

import nats

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


async def test_forged_calls_are_refused_and_costs_are_recomputed(
    nats_url: str, unique: str, tmp_path
) -> None:
    settings = build_settings(nats_url=nats_url, store=f"sqlite:///{tmp_path}/t.db", llm="offline")
    ctx = await start_service("telemetry", build=build, settings=settings, namespace=f"n{unique}")
    letters: list[dict] = []
    nc = await nats.connect(nats_url)

    async def on_letter(msg) -> None:  # type: ignore[no-untyped-def]
        letters.append(json.loads(msg.data))

    await nc.subscribe(f"{ctx.namespace}.failed.llm.call.logged", cb=on_letter)
    try:
        negative = LLMCallRecord(task="forged", model="claude-sonnet-4-5", tier="standard",
                                 duration_ms=1.0, ok=True, input_tokens=-5)  # fmt: skip
        huge = LLMCallRecord(task="forged", model="claude-sonnet-4-5", tier="standard",
                             duration_ms=1.0, ok=True, output_tokens=10**12)  # fmt: skip
        inflated = LLMCallRecord(task="honest", model="claude-sonnet-4-5", tier="standard",
                                 duration_ms=1.0, ok=True, input_tokens=1_000_000,
                                 output_tokens=0, cost_usd=1e12)  # fmt: skip
        for record in (negative, huge, inflated):
            event = LLMCallLogged(record=record, actor="liar")
            await publish_event(ctx.broker, event, namespace=ctx.namespace)
        for _ in range(200):
            if len(letters) >= 2 and await ctx.store.llm_calls.count() >= 1:
                break
            await asyncio.sleep(0.05)
        calls = await ctx.store.llm_calls.last(10)
    finally:
        await nc.close()
        await stop_service(ctx)
    assert [c.task for c in calls] == ["honest"]
    assert calls[0].cost_usd == 3.0  # 1M input tokens of Sonnet at $3/MTok, not 1e12
    assert len(letters) == 2 and all("outside" in x["error"] for x in letters)
