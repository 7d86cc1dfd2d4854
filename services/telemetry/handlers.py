"""Thin handler: one llm.call.logged event → one stored call (idempotent by event id)."""

from __future__ import annotations

from typing import Protocol

from services.telemetry.calls import checked_record
from shared.bus import LLMCallLogged
from shared.llm import LLMCallRecord


class CallLog(Protocol):
    """The write side of the llm_calls collection this service owns."""

    async def add(self, record: LLMCallRecord, *, call_id: str) -> object:
        """Store one call record (a repeated call_id stores nothing new)."""
        ...


async def on_call_logged(calls: CallLog, event: LLMCallLogged) -> None:
    """Check and persist the call record; a redelivery with the same event id adds nothing."""
    await calls.add(checked_record(event.record), call_id=event.event_id)
