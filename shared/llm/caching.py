"""Prompt-cache breakpoints that the API will honour: only on prefixes at or above the minimum.

The API caches the request prefix up to a block marked with `cache_control` (tools, then
system blocks, then messages, in that order), but silently ignores a mark whose prefix is
shorter than the model's minimum (`min_cacheable_tokens`). Callers mark the blocks they want
cached; `fit_breakpoints` keeps the marks whose prefix qualifies (at most four, the API's
limit), drops the rest and warns once per task, model and block, naming the shortfall.

Sizes: Claude's tokenizer is not public, so a prefix is first sized from its characters.
Dutch, English and JSON run between CHARS_PER_TOKEN_MAX (5) and CHARS_PER_TOKEN_MIN (2)
characters per token, so `chars / 5` is a floor and `chars / 2` a ceiling of the true count:
a prefix whose floor reaches the minimum qualifies, one whose ceiling stays below it does not,
and only a prefix in between is counted exactly with the provider's `count_tokens`
(`POST /v1/messages/count_tokens`), once per model and prefix content (the stable prefix of a
KB version is counted once, not per turn). A later mark's bounds start from the last exact
count, so a per-question block after a counted catalogue is rarely counted itself. Without a
counter, or when counting fails, the floor decides: a mark may be dropped that would have
qualified, never kept one that does not. The count of a system prefix includes a one-token
placeholder message; COUNT_MARGIN covers it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

log = logging.getLogger(__name__)

MAX_BREAKPOINTS = 4
CHARS_PER_TOKEN_MAX = 5.0  # the most characters one token covers in our prompts (floor)
CHARS_PER_TOKEN_MIN = 2.0  # the fewest (ceiling)
COUNT_MARGIN = 16  # tokens of the placeholder message a counted system prefix includes
COUNT_CACHE = 256
DEFAULT_MIN_TOKENS = 4096  # an unknown model gets the strictest current minimum
CACHE_CONTROL: dict[str, Any] = {"type": "ephemeral"}

# (model-id pattern, minimum cacheable prefix in tokens); first match wins. Anthropic's prompt
# caching page (2026-12): 4,096 for Haiku 4.5 and Opus 4.5 and later; 1,024 for Sonnet 4.5,
# Sonnet 4, Opus 4.1 and Opus 4; 2,048 for Haiku 3.x. Sonnet 4.6 is listed at 1,024 but was
# seen caching only from 2,048 (anthropic-sdk-python#1194): 2,048 here, the safe side.
_MINIMUMS: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"haiku-4"), 4096),
    (re.compile(r"opus-4-[5-9]"), 4096),
    (re.compile(r"sonnet-4-[6-9]"), 2048),
    (re.compile(r"(haiku-3|3-5-haiku|3-haiku)"), 2048),
    (re.compile(r"(sonnet|opus)-4|3-7-sonnet|3-5-sonnet"), 1024),
)
_warned: set[tuple[str, str, int]] = set()
_counted: OrderedDict[str, int] = OrderedDict()

TokenCounter = Callable[[dict[str, Any]], Awaitable[int]]
"""Counts the input tokens of a Messages API request body (model, system, tools, messages)."""


def min_cacheable_tokens(model: str) -> int:
    """The smallest prefix, in tokens, that this model caches."""
    lowered = model.lower()
    for pattern, minimum in _MINIMUMS:
        if pattern.search(lowered):
            return minimum
    return DEFAULT_MIN_TOKENS


def cached_system(text: str) -> list[dict[str, Any]]:
    """A system prompt as one text block marked for caching (dropped when too short)."""
    return [{"type": "text", "text": text, "cache_control": dict(CACHE_CONTROL)}]


def _chars(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    return len(json.dumps(value, ensure_ascii=False, default=str))


def estimate_tokens(value: Any) -> int:
    """A floor of the token count of a text or JSON-able value (chars / CHARS_PER_TOKEN_MAX)."""
    return int(_chars(value) / CHARS_PER_TOKEN_MAX)


def _blocks(params: dict[str, Any]) -> Iterator[tuple[str, int, dict[str, Any], int]]:
    """(part, index, block, characters) for every block of the prefix, in API order."""
    for i, tool in enumerate(params.get("tools") or []):
        yield "tools", i, tool, _chars({k: v for k, v in tool.items() if k != "cache_control"})
    system = params.get("system")
    if isinstance(system, list):
        for i, block in enumerate(system):
            yield "system", i, block, _chars(block.get("text", ""))
    elif isinstance(system, str):
        yield "system", 0, {}, len(system)
    for i, message in enumerate(params.get("messages") or []):
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    yield "messages", i, block, _chars(block)
        else:
            yield "messages", i, {}, _chars(content or "")


def _prefix_body(params: dict[str, Any], part: str, index: int) -> dict[str, Any] | None:
    """The request that holds exactly the prefix up to a tools/system block (None: messages)."""
    if part == "messages":
        return None
    body: dict[str, Any] = {"model": params.get("model", "")}
    tools = params.get("tools") or []
    if tools:
        body["tools"] = tools[: index + 1] if part == "tools" else tools
    if part == "system":
        body["system"] = params["system"][: index + 1]
    body["messages"] = [{"role": "user", "content": "."}]
    return body


async def _counted_tokens(body: dict[str, Any], counter: TokenCounter) -> int | None:
    key = hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()
    if key in _counted:
        _counted.move_to_end(key)
        return _counted[key]
    try:
        tokens = int(await counter(body))
    except Exception as exc:  # counting is an optimisation: the floor decides instead
        log.info("count_tokens failed (%s: %s); sizing the prefix by its floor",
                 type(exc).__name__, exc)  # fmt: skip
        return None
    _counted[key] = tokens
    while len(_counted) > COUNT_CACHE:
        _counted.popitem(last=False)
    return tokens


async def _prefix_size(
    params: dict[str, Any],
    mark: tuple[str, int, int],
    minimum: int,
    counter: TokenCounter | None,
    known: tuple[int, int],
) -> tuple[int, int]:
    """(low, high) bounds of a prefix's tokens; exact (low == high) when it was counted.

    `known` is (characters, tokens) of the longest shorter prefix counted exactly (or 0, 0):
    only the characters after it are estimated. Counted only when the bounds straddle the
    minimum.
    """
    part, index, chars = mark
    extra = chars - known[0]
    floor = known[1] + int(extra / CHARS_PER_TOKEN_MAX)
    ceiling = known[1] + int(extra / CHARS_PER_TOKEN_MIN)
    if floor >= minimum or ceiling < minimum or counter is None:
        return floor, ceiling
    body = _prefix_body(params, part, index)
    counted = await _counted_tokens(body, counter) if body is not None else None
    if counted is None:
        return floor, ceiling
    exact = max(counted - COUNT_MARGIN, 0)
    return exact, exact


async def fit_breakpoints(
    task: str, params: dict[str, Any], *, counter: TokenCounter | None = None
) -> list[int]:
    """Keep the cache marks whose prefix reaches the model's minimum; return their sizes.

    Works in place on `params` (prepare_call built the system and tool blocks afresh; marked
    message blocks are copied here, so no caller's data changes). A size is the exact count
    when one was made, else the floor estimate.
    """
    params["messages"] = [_copied(message) for message in params.get("messages") or []]
    model = str(params.get("model", ""))
    minimum = min_cacheable_tokens(model)
    marked: list[tuple[str, int, dict[str, Any], int]] = []
    chars = 0
    for part, index, block, size in _blocks(params):
        chars += size
        if block.get("cache_control"):
            marked.append((part, index, block, chars))
    kept: list[tuple[dict[str, Any], int]] = []
    known = (0, 0)
    for position, (part, index, block, prefix_chars) in enumerate(marked):
        mark = (part, index, prefix_chars)
        size, high = await _prefix_size(params, mark, minimum, counter, known)
        if size == high:
            known = (prefix_chars, size)
        if size < minimum:
            block.pop("cache_control")
            _warn_short(task, model, position, (size, high), minimum)
            continue
        kept.append((block, size))
        # Prefixes only grow: every later mark qualifies too (sized by its own floor).
        for _, _, later, later_chars in marked[position + 1 :]:
            kept.append((later, max(int(later_chars / CHARS_PER_TOKEN_MAX), size)))
        break
    # The API takes at most four marks; the longest prefixes save the most.
    for block, _ in kept[:-MAX_BREAKPOINTS]:
        block.pop("cache_control")
    return [size for _, size in kept[-MAX_BREAKPOINTS:]]


def _copied(message: Any) -> Any:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list) or not any(
        isinstance(block, dict) and block.get("cache_control") for block in content
    ):
        return message
    return {**message, "content": [dict(b) if isinstance(b, dict) else b for b in content]}


def _warn_short(
    task: str, model: str, position: int, bounds: tuple[int, int], minimum: int
) -> None:
    if (task, model, position) in _warned:
        return
    _warned.add((task, model, position))
    low, high = bounds
    size = f"{low}" if low == high else f"~{low}-{min(high, minimum - 1)}"
    shortfall = (
        f"{minimum - low}" if low == high else f"at least {minimum - min(high, minimum - 1)}"
    )
    log.warning(
        "task %r marks a prefix of %s tokens for caching (mark %d), %s short of %s's minimum "
        "of %d tokens: not cached (the mark is dropped)",
        task, size, position + 1, shortfall, model, minimum,
    )  # fmt: skip
