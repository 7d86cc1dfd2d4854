"""Argument checking for `call_llm`: bad input fails here, before any request is made."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shared.llm.errors import LLMInputError
from shared.llm.parsing import type_adapter
from shared.llm.providers.base import ProviderReply, ProviderRequest
from shared.llm.runtime import TIERS, LLMRuntime
from shared.llm.tools import Tool, forces_tool, normalize_tool_choice, schema_for

log = logging.getLogger(__name__)


@dataclass
class PreparedCall:
    """One validated call: the API params plus what interpreting the reply needs."""

    task: str
    tier: str
    model: str
    request: ProviderRequest
    tools: dict[str, Tool]
    forced: bool
    schema: Any
    max_tokens: int
    reply: ProviderReply | None = None
    estimate: int | None = None

    def input_estimate(self) -> int:
        """Input tokens to reserve: chars/4 of system + messages + tools, computed once."""
        if self.estimate is None:
            self.estimate = _estimate_input_tokens(self.request.params)
        return self.estimate


def prepare_call(
    runtime: LLMRuntime,
    *,
    task: str,
    tier: str,
    system: str | Sequence[Mapping[str, Any]] | None,
    messages: Sequence[Mapping[str, Any]] | None,
    user: str | None,
    tools: Sequence[Tool] | None,
    tool_choice: str | Tool | Mapping[str, Any] | None,
    schema: Any,
    max_tokens: int,
    timeout: float,
) -> PreparedCall:
    """Check every argument (LLMInputError before any request) and build the API params."""
    if not isinstance(task, str) or not task.strip():
        raise LLMInputError("call_llm needs a non-empty task name (used in telemetry)")
    if tier not in TIERS:
        raise LLMInputError(f"unknown tier {tier!r}; expected one of {', '.join(TIERS)}")
    if user is not None and messages is not None:
        raise LLMInputError("give either user=... or messages=..., not both")
    if user is not None:
        if not isinstance(user, str) or not user.strip():
            raise LLMInputError("user must be a non-empty string")
        msgs: list[Any] = [{"role": "user", "content": user}]
    else:
        if not messages:
            raise LLMInputError("call_llm needs messages (or user=...)")
        msgs = list(messages)
        for i, msg in enumerate(msgs):
            if not isinstance(msg, Mapping) or msg.get("role") not in ("user", "assistant"):
                raise LLMInputError(f"messages[{i}] must be a dict with role user or assistant")
            if not msg.get("content"):
                raise LLMInputError(f"messages[{i}] has no content")
    tool_list = list(tools or [])
    by_name: dict[str, Tool] = {}
    for tool in tool_list:
        if not isinstance(tool, Tool):
            raise LLMInputError(f"tools must be Tool instances, not {type(tool).__name__}")
        if tool.name in by_name:
            raise LLMInputError(f"two tools are named {tool.name!r}")
        by_name[tool.name] = tool
    choice = normalize_tool_choice(tool_choice, tool_list)
    forced = forces_tool(choice)
    if schema is not None and forced:
        raise LLMInputError("schema= (a JSON text reply) contradicts a forced tool_choice")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise LLMInputError(f"max_tokens must be a positive integer, not {max_tokens!r}")
    if not isinstance(timeout, int | float) or timeout <= 0:
        raise LLMInputError(f"timeout must be a positive number of seconds, not {timeout!r}")
    model = runtime.model_for(tier)
    params: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "messages": msgs}
    if system:
        if not isinstance(system, str):
            system = _check_system_blocks(system)
        params["system"] = system
    if tool_list:
        params["tools"] = [tool.to_param() for tool in tool_list]
    if choice is not None:
        params["tool_choice"] = choice
    # Cache marks are checked against the model's minimum in call_llm (fit_breakpoints).
    schema_json = _schema_json(schema) if schema is not None else None
    request = ProviderRequest(
        params=params, timeout=float(timeout), tools=tuple(tool_list), schema_json=schema_json
    )
    return PreparedCall(task, tier, model, request, by_name, forced, schema, max_tokens)


def _check_system_blocks(system: Sequence[Mapping[str, Any]]) -> list[Any]:
    # Copies: dropping a cache mark that is too short must not change the caller's blocks.
    blocks = [dict(block) if isinstance(block, Mapping) else block for block in system]
    for i, block in enumerate(blocks):
        if not isinstance(block, Mapping) or block.get("type") != "text":
            raise LLMInputError(f"system[{i}] must be a text block ({{'type': 'text', ...}})")
        if not isinstance(block.get("text"), str):
            raise LLMInputError(f"system[{i}] needs a text string")
    return blocks


def _schema_json(schema: Any) -> dict[str, Any]:
    try:
        if isinstance(schema, type) and hasattr(schema, "model_json_schema"):
            return schema_for(schema)
        return type_adapter(schema).json_schema()
    except Exception as exc:  # any failure means the schema is unusable
        raise LLMInputError(f"schema {schema!r} is not a pydantic model or type: {exc}") from None


def _estimate_input_tokens(params: dict[str, Any]) -> int:
    # chars/4 is the usual rough estimate; the limiter corrects it from real usage.
    size = len(json.dumps(params["messages"], default=str))
    size += len(json.dumps(params.get("system", ""), default=str))
    size += len(json.dumps(params.get("tools", []), default=str))
    return max(size // 4, 1)
