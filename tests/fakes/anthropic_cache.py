"""The fake Anthropic server's tokenizer and prompt cache, honouring cache_control as the API does.

Tokens: a deterministic stand-in for Claude's tokenizer (which is not public): a text is
ceil(chars / 3) tokens, a tool definition the same over its JSON, 3 tokens per message, and
the tool-use system prompt the API adds when tools are offered (TOOL_OVERHEAD). The same
counts answer `POST /v1/messages/count_tokens` and fill `usage` of `POST /v1/messages`.

Cache (the prompt caching page's rules): the prefix is tools, then system, then messages; a
block with `cache_control` ends a cacheable prefix; at most 4 such blocks (a 5th is a 400);
`cache_control` is `{"type": "ephemeral"}` with an optional `ttl` of "5m" (default) or "1h";
a prefix shorter than the model's minimum is silently not cached. A request reads the longest
cached prefix that is identical (same model, same blocks up to that mark) and writes the rest
up to its last qualifying mark; an entry lives for its TTL from its last use.
Usage: input_tokens + cache_creation_input_tokens + cache_read_input_tokens = the request's
total, as the API reports it.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

TOOL_OVERHEAD = 346  # the tool-use system prompt (Claude 4 models, tool_choice auto/none)
MESSAGE_OVERHEAD = 3
MAX_CACHE_BLOCKS = 4
TTLS = {"5m": 300.0, "1h": 3600.0}
# The API's minimum cacheable prefix per model family (its prompt caching page, 2026-12);
# Sonnet 4.6 at 2,048 as it behaves (anthropic-sdk-python#1194). Unknown models: 4,096.
MINIMUMS = (
    ("haiku-4", 4096), ("opus-4-5", 4096), ("opus-4-6", 4096), ("opus-4-7", 4096),
    ("sonnet-4-6", 2048), ("haiku-3", 2048), ("sonnet-4", 1024), ("opus-4", 1024),
)  # fmt: skip


class CacheRequestError(ValueError):
    """A request the API refuses for its cache_control (answered 400 invalid_request_error)."""


def fake_tokens(value: Any) -> int:
    """The fake tokenizer: ceil(chars / 3) of a text or of a value's JSON."""
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return math.ceil(len(text) / 3)


def minimum_for(model: str) -> int:
    """The minimum cacheable prefix of a model id."""
    return next((n for family, n in MINIMUMS if family in model), 4096)


@dataclass(frozen=True)
class _Block:
    key: str  # the block's canonical JSON, cache_control left out
    tokens: int
    ttl: float | None  # set when the block carries cache_control


def _cache_ttl(control: Any, where: str) -> float:
    if not isinstance(control, dict) or control.get("type") != "ephemeral":
        raise CacheRequestError(f"{where}.cache_control.type: Input should be 'ephemeral'")
    ttl = control.get("ttl", "5m")
    if ttl not in TTLS:
        raise CacheRequestError(f"{where}.cache_control.ttl: Input should be '5m' or '1h'")
    return TTLS[ttl]


def _block(value: dict[str, Any], where: str, tokens: int | None = None) -> _Block:
    bare = {k: v for k, v in value.items() if k != "cache_control"}
    ttl = _cache_ttl(value["cache_control"], where) if "cache_control" in value else None
    counted = tokens if tokens is not None else fake_tokens(bare.get("text", bare))
    return _Block(json.dumps(bare, sort_keys=True), counted, ttl)


def prefix_blocks(body: dict[str, Any]) -> list[_Block]:
    """Every block of a request in the API's prefix order, with its tokens and cache mark."""
    blocks: list[_Block] = []
    tools = body.get("tools") or []
    if tools:
        blocks.append(_Block('"tool-use system prompt"', TOOL_OVERHEAD, None))
    for i, tool in enumerate(tools):
        bare = {k: v for k, v in tool.items() if k != "cache_control"}
        blocks.append(_block(tool, f"tools.{i}", fake_tokens(bare)))
    system = body.get("system")
    if isinstance(system, str) and system:
        blocks.append(_Block(json.dumps(system), fake_tokens(system), None))
    elif isinstance(system, list):
        for i, item in enumerate(system):
            blocks.append(_block(item, f"system.{i}"))
    for i, message in enumerate(body.get("messages") or []):
        blocks.append(_Block(json.dumps(message.get("role")), MESSAGE_OVERHEAD, None))
        content = message.get("content")
        if isinstance(content, str):
            blocks.append(_Block(json.dumps(content), fake_tokens(content), None))
        for j, item in enumerate(content if isinstance(content, list) else []):
            blocks.append(_block(item, f"messages.{i}.content.{j}"))
    marks = sum(block.ttl is not None for block in blocks)
    if marks > MAX_CACHE_BLOCKS:
        raise CacheRequestError(
            f"A maximum of {MAX_CACHE_BLOCKS} blocks with cache_control may be provided. "
            f"Found {marks}."
        )
    return blocks


class PromptCache:
    """Cached prefixes by content hash, each with its expiry; thread-safe."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._entries: dict[str, float] = {}

    def clear(self) -> None:
        """Forget every cached prefix."""
        with self._lock:
            self._entries.clear()

    def usage(self, body: dict[str, Any]) -> dict[str, int]:
        """Read and write the request's cacheable prefixes; its usage split as the API does."""
        blocks = prefix_blocks(body)
        total = sum(block.tokens for block in blocks)
        minimum = minimum_for(str(body.get("model", "")))
        digest = hashlib.sha256(str(body.get("model", "")).encode())
        marks: list[tuple[str, int, float]] = []  # (prefix hash, prefix tokens, ttl)
        running = 0
        for block in blocks:
            digest.update(block.key.encode() + b"\x00")
            running += block.tokens
            if block.ttl is not None and running >= minimum:
                marks.append((digest.copy().hexdigest(), running, block.ttl))
        now = self.clock()
        read = 0
        with self._lock:
            for key, tokens, ttl in marks:
                if self._entries.get(key, 0.0) > now:
                    read = tokens
                    self._entries[key] = now + ttl  # a read refreshes the entry
            written = marks[-1][1] - read if marks and marks[-1][1] > read else 0
            for key, _, ttl in marks:
                self._entries[key] = max(self._entries.get(key, 0.0), now + ttl)
        return {
            "input_tokens": total - read - written,
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
        }


def count_tokens(body: dict[str, Any]) -> int:
    """What `POST /v1/messages/count_tokens` answers for a body (no cache effect)."""
    return sum(block.tokens for block in prefix_blocks(body))
