"""The provider contract: one HTTP-attempt-sized `create` that call_llm retries and validates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from shared.llm.result import Usage
from shared.llm.tools import Tool


@dataclass(frozen=True)
class ProviderRequest:
    """One Messages API request plus what an offline provider needs to answer it well."""

    params: dict[str, Any]
    timeout: float
    tools: tuple[Tool, ...] = ()
    # The JSON schema a text reply must satisfy (schema calls); the API never sees it.
    schema_json: dict[str, Any] | None = None


@dataclass(frozen=True)
class ProviderReply:
    """The assistant message as plain dicts, with usage and the response's provenance."""

    content: list[dict[str, Any]]
    stop_reason: str | None
    usage: Usage
    model: str
    request_id: str | None = None
    ratelimit: Mapping[str, str] = field(default_factory=dict)


@runtime_checkable
class Provider(Protocol):
    """A backend answering Messages API requests (Anthropic, offline, or a test double)."""

    name: str
    # Whether requests count against Anthropic's rate limits (the limiter is skipped if not).
    rate_limited: bool

    async def create(self, request: ProviderRequest) -> ProviderReply:
        """Make one attempt; raise LLMHttpError (or LLMConnectionError) on failure."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
