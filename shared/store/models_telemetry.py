"""The record of one LLM call: what `llm.call.logged` carries and `llm_calls` stores.

It lives with the store (which persists it) so the store needs nothing from shared.llm;
shared.llm and shared.bus import it from here.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, Field


class LLMCallRecord(BaseModel):
    """One LLM call, successful or not: what `llm.call.logged` carries and `llm_calls` stores."""

    task: str
    model: str
    tier: str
    duration_ms: float
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    stop_reason: str | None = None
    ok: bool
    error_msg: str | None = None
    cost_usd: float = 0.0
    request_id: str | None = None
    provider: str = "anthropic"
    occurred_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
