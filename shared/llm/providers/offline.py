"""The offline provider: deterministic, schema-valid replies derived from the request."""

from __future__ import annotations

import hashlib
import inspect
import json
import random
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from shared.llm.errors import LLMInputError, LLMOutputError
from shared.llm.providers.base import ProviderReply, ProviderRequest
from shared.llm.providers.schema_fill import SchemaFiller, words_of
from shared.llm.result import Usage
from shared.llm.tools import Tool

OFFLINE_MODEL = "offline"
OFFLINE_PREFIX = "[offline] "
_MAX_QUOTE = 300
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True)
class OfflineRequest:
    """What a registered offline handler sees: the tool asked for and the request's text."""

    tool: Tool
    system: str
    user: str
    messages: list[dict[str, Any]]
    seed: int

    @property
    def rng(self) -> random.Random:
        """A random generator seeded from the request (same request → same choices)."""
        return random.Random(self.seed)

    def sentences(self) -> list[str]:
        """Sentences (and markdown lines) of the last user message, markers stripped."""
        return split_sentences(self.user)


OfflineHandler = Callable[[OfflineRequest], "dict[str, Any] | BaseModel | Awaitable[Any] | None"]
_HANDLERS: dict[str, OfflineHandler] = {}


def register_offline_handler(tool_name: str, fn: OfflineHandler) -> None:
    """Let a service derive smarter offline input for its tool (return None to use the default)."""
    if not isinstance(tool_name, str) or not tool_name:
        raise LLMInputError("register_offline_handler needs a tool name")
    if not callable(fn):
        raise LLMInputError(f"offline handler for {tool_name!r} is not callable")
    _HANDLERS[tool_name] = fn


def unregister_offline_handler(tool_name: str) -> None:
    """Forget a registered handler (tests)."""
    _HANDLERS.pop(tool_name, None)


def split_sentences(text: str) -> list[str]:
    """Sentences and lines of text, with markdown list/heading markers removed."""
    out = []
    for part in _SENTENCE_SPLIT.split(text):
        cleaned = re.sub(r"^\s*(?:#{1,6}|[-*+]|\d+[.)])\s+", "", part).strip()
        if cleaned:
            out.append(cleaned[:_MAX_QUOTE])
    return out


def _text_of(content: Any, *, tool_results: bool = True) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                if block.get("type") == "text":
                    parts.append(str(block.get("text", "")))
                elif block.get("type") == "tool_result" and tool_results:
                    parts.append(_text_of(block.get("content", "")))
        return "\n".join(parts)
    return ""


class OfflineProvider:
    """Answers without a model: text quoting the request, tool inputs generated from schemas."""

    name = "offline"
    rate_limited = False

    async def create(self, request: ProviderRequest) -> ProviderReply:
        """Build a deterministic reply for the request."""
        params = request.params
        seed = int.from_bytes(
            hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).digest()[:8],
            "big",
        )
        system = _text_of(params.get("system", ""))
        messages: list[dict[str, Any]] = list(params.get("messages", []))
        # The question is the last user text; tool results that follow it are context.
        user = next(
            (
                _text_of(m.get("content"), tool_results=False)
                for m in reversed(messages)
                if m.get("role") == "user" and _text_of(m.get("content"), tool_results=False)
            ),
            "",
        )
        tool = _chosen_tool(params.get("tool_choice"), request.tools)
        if tool is not None:
            context = OfflineRequest(tool, system, user, messages, seed)
            tool_input = await _tool_input(context)
            block = {
                "type": "tool_use",
                "id": f"toolu_offline_{seed:016x}",
                "name": tool.name,
                "input": tool_input,
            }
            return _reply([block], "tool_use")
        texts = split_sentences(user) + split_sentences(system)
        if request.schema_json is not None:
            filler = SchemaFiller(request.schema_json, texts=texts, rng=random.Random(seed))
            payload = json.dumps(filler.fill(), ensure_ascii=False, indent=2)
            return _reply([_text_block(f"{OFFLINE_PREFIX}```json\n{payload}\n```")], "end_turn")
        context = [system, *(_text_of(m.get("content")) for m in messages)]
        return _reply([_text_block(OFFLINE_PREFIX + _quote_reply(user, context))], "end_turn")

    async def aclose(self) -> None:
        """Nothing to release."""


def _chosen_tool(choice: dict[str, Any] | None, tools: tuple[Tool, ...]) -> Tool | None:
    # With tool_choice auto/none the offline model answers in text, which ends any tool loop.
    if not choice or not tools:
        return None
    if choice.get("type") == "any":
        return tools[0]
    if choice.get("type") == "tool":
        return next((t for t in tools if t.name == choice.get("name")), None)
    return None


async def _tool_input(context: OfflineRequest) -> dict[str, Any]:
    handler = _HANDLERS.get(context.tool.name)
    if handler is not None:
        try:
            produced = handler(context)
            if inspect.isawaitable(produced):
                produced = await produced
        except Exception as exc:
            raise LLMOutputError(
                f"offline handler for tool {context.tool.name!r} failed: {exc}"
            ) from exc
        if isinstance(produced, BaseModel):
            return produced.model_dump(mode="json")
        if produced is not None:
            return dict(produced)
    texts = context.sentences() + split_sentences(context.system)
    filler = SchemaFiller(context.tool.input_schema, texts=texts, rng=context.rng)
    return filler.fill()


def _quote_reply(user: str, context: list[str]) -> str:
    asked = set(w for w in words_of(user) if len(w) > 2)
    question = set(split_sentences(user))
    best, best_score = "", -1
    lines = [line for text in context for line in split_sentences(text)]
    for line in lines:
        if line in question:
            continue  # quoting the question back is no answer
        score = len(asked & set(words_of(line)))
        if score > best_score:  # ties keep the earliest line
            best, best_score = line, score
    if best:
        return f'Most relevant context: "{best}"'
    first = (split_sentences(user) or [""])[0]
    return f'No language model is configured. You asked: "{first}"'


def _text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _reply(content: list[dict[str, Any]], stop_reason: str) -> ProviderReply:
    # No tokens were spent: usage stays zero so cost and rate accounting stay honest.
    return ProviderReply(
        content=content, stop_reason=stop_reason, usage=Usage(), model=OFFLINE_MODEL
    )
