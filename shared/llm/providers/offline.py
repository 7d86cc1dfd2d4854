"""The offline provider: deterministic, schema-valid replies derived from the request.

A service passes its own plans in (`OfflinePlans`, given to the provider when the host builds
the LLM runtime): per tool a function that derives the tool input from the request, and per
conversation a turn function that plays the model's free choice (call a tool or answer in
text) when the request lets the model choose. Nothing is registered process-wide.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import random
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
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
    """What an offline plan sees: the tool asked for (None in a free turn) and the request."""

    tool: Tool | None
    system: str
    user: str
    messages: list[dict[str, Any]]
    seed: int
    tools: tuple[Tool, ...] = ()
    tool_choice: str = "auto"

    @property
    def rng(self) -> random.Random:
        """A random generator seeded from the request (same request → same choices)."""
        return random.Random(self.seed)

    def sentences(self) -> list[str]:
        """Sentences (and markdown lines) of the last user message, markers stripped."""
        return split_sentences(self.user)


@dataclass(frozen=True)
class OfflineStep:
    """A turn plan's choice: call `tool` (its input from the tool plan), else answer `text`."""

    tool: str | None = None
    text: str = ""


OfflineHandler = Callable[[OfflineRequest], "dict[str, Any] | BaseModel | Awaitable[Any] | None"]
OfflineTurn = Callable[[OfflineRequest], "OfflineStep | Awaitable[OfflineStep]"]


@dataclass(frozen=True)
class OfflinePlans:
    """A service's offline stand-ins: tool inputs by tool name, free turns by an offered tool."""

    tools: Mapping[str, OfflineHandler] = field(default_factory=dict)
    turns: Mapping[str, OfflineTurn] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, fn in [*self.tools.items(), *self.turns.items()]:
            if not isinstance(name, str) or not name:
                raise LLMInputError("an offline plan needs a tool name")
            if not callable(fn):
                raise LLMInputError(f"offline plan for {name!r} is not callable")

    def merged(self, other: OfflinePlans) -> OfflinePlans:
        """Both sets of plans (`other` wins on a shared name)."""
        return OfflinePlans(
            tools={**self.tools, **other.tools}, turns={**self.turns, **other.turns}
        )


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


_STREAM_PIECES = re.compile(r"\s*\S+\s*|\s+")


class OfflineProvider:
    """Answers without a model: text quoting the request, tool inputs generated from schemas."""

    name = "offline"
    rate_limited = False

    def __init__(self, plans: OfflinePlans | None = None) -> None:
        self.plans = plans or OfflinePlans()

    @contextlib.contextmanager
    def using(self, plans: OfflinePlans) -> Iterator[None]:
        """Answer with `plans` inside the block (an eval playing one service), then as before."""
        earlier, self.plans = self.plans, plans
        try:
            yield
        finally:
            self.plans = earlier

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
        choice = params.get("tool_choice") or {}
        tool = _chosen_tool(choice, request.tools)
        if tool is None and request.tools:
            turn = next((self.plans.turns[t.name] for t in request.tools
                         if t.name in self.plans.turns), None)  # fmt: skip
            if turn is not None:
                free = OfflineRequest(None, system, user, messages, seed, request.tools,
                                      str(choice.get("type", "auto")))  # fmt: skip
                step = await _run_turn(turn, free)
                if step.tool is None or free.tool_choice == "none":
                    return _reply([_text_block(step.text)], "end_turn")
                tool = next((t for t in request.tools if t.name == step.tool), None)
                if tool is None:
                    raise LLMOutputError(f"offline turn chose an unoffered tool {step.tool!r}")
        if tool is not None:
            context = OfflineRequest(tool, system, user, messages, seed, request.tools)
            tool_input = await _tool_input(tool, context, self.plans)
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
        quoted = [system, *(_text_of(m.get("content")) for m in messages)]
        return _reply([_text_block(OFFLINE_PREFIX + _quote_reply(user, quoted))], "end_turn")

    async def stream(
        self, request: ProviderRequest, on_text: Callable[[str], Awaitable[None]]
    ) -> ProviderReply:
        """The same reply as `create`, its text handed over word by word as a model streams."""
        reply = await self.create(request)
        for block in reply.content:
            if block.get("type") == "text":
                for piece in _STREAM_PIECES.findall(str(block.get("text", ""))):
                    await on_text(piece)
        return reply

    async def aclose(self) -> None:
        """Nothing to release."""


def _chosen_tool(choice: dict[str, Any], tools: tuple[Tool, ...]) -> Tool | None:
    # With tool_choice auto/none the offline model answers in text, which ends any tool loop.
    if not choice or not tools:
        return None
    if choice.get("type") == "any":
        return tools[0]
    if choice.get("type") == "tool":
        return next((t for t in tools if t.name == choice.get("name")), None)
    return None


async def _run_turn(turn: OfflineTurn, request: OfflineRequest) -> OfflineStep:
    try:
        produced = turn(request)
        if inspect.isawaitable(produced):
            produced = await produced
    except Exception as exc:
        raise LLMOutputError(f"offline turn plan failed: {exc}") from exc
    if not isinstance(produced, OfflineStep):
        raise LLMOutputError("an offline turn plan must return an OfflineStep")
    return produced


async def _tool_input(tool: Tool, context: OfflineRequest, plans: OfflinePlans) -> dict[str, Any]:
    handler = plans.tools.get(tool.name)
    if handler is not None:
        try:
            produced = handler(context)
            if inspect.isawaitable(produced):
                produced = await produced
        except Exception as exc:
            raise LLMOutputError(f"offline handler for tool {tool.name!r} failed: {exc}") from exc
        if isinstance(produced, BaseModel):
            return produced.model_dump(mode="json")
        if produced is not None:
            return dict(produced)
    texts = context.sentences() + split_sentences(context.system)
    filler = SchemaFiller(tool.input_schema, texts=texts, rng=context.rng)
    filled: dict[str, Any] = filler.fill()
    return filled


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
