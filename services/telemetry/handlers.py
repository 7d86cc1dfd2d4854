"""Thin handler: one llm.call.logged event → one stored call (idempotent by event id)."""

from __future__ import annotations

from shared.bus import LLMCallLogged
from shared.store import Store


async def store_call(event: LLMCallLogged, *, store: Store) -> None:
    """Persist the call record; a redelivery with the same event id stores nothing new."""
    await store.llm_calls.add(event.record, call_id=event.event_id)
