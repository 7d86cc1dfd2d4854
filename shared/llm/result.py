"""What one `call_llm` returns."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from shared.llm.tools import ToolUse


@dataclass(frozen=True)
class Usage:
    """Token counts as the API reports them (input excludes cache reads and writes)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


@dataclass(frozen=True)
class LLMResult:
    """A validated reply: text, tool calls, parsed schema output, usage and provenance."""

    text: str
    tool_uses: list[ToolUse]
    parsed: Any
    stop_reason: str | None
    usage: Usage
    request_id: str | None
    model: str
    duration_ms: float
    provider: str = "anthropic"
    cost_usd: float = 0.0
    # The assistant's content blocks as plain dicts, to append verbatim in a tool loop.
    content: list[dict[str, Any]] = field(default_factory=list)
    # The response's anthropic-ratelimit-* headers (empty offline).
    ratelimit: Mapping[str, str] = field(default_factory=dict)

    @property
    def offline(self) -> bool:
        """Whether the reply came from the offline provider (no model was called)."""
        return self.provider == "offline"

    def assistant_message(self) -> dict[str, Any]:
        """This reply as an assistant turn (`{"role": "assistant", "content": [...]}`)."""
        return {"role": "assistant", "content": list(self.content)}
