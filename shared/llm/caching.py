"""Prompt-cache breakpoints that the API will honour: only on prefixes above the model's minimum.

The API caches the request prefix up to a block marked with `cache_control` (tools, then
system blocks, then messages, in that order), but silently ignores a mark whose prefix is
shorter than the model's minimum. Callers mark the blocks they want cached; `place_breakpoints`
keeps the marks whose prefix qualifies (at most four, the API's limit), drops the rest and
warns once per task and model, naming the shortfall.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from typing import Any

log = logging.getLogger(__name__)

MAX_BREAKPOINTS = 4
# Conservative: Dutch and JSON run at 2.5–3.5 characters per token, so chars/4 undercounts
# and a prefix this estimate calls long enough is long enough.
CHARS_PER_TOKEN = 4.0
DEFAULT_MIN_TOKENS = 4096  # an unknown model gets the strictest current minimum

# (model-id pattern, minimum cacheable prefix in tokens); first match wins.
_MINIMUMS: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"haiku-4"), 4096),
    (re.compile(r"opus-4-[5-9]"), 4096),
    (re.compile(r"sonnet-4-[6-9]"), 2048),
    (re.compile(r"(haiku-3|3-5-haiku|3-haiku)"), 2048),
    (re.compile(r"(sonnet|opus)-4|3-7-sonnet|3-5-sonnet"), 1024),
)
_warned: set[tuple[str, str]] = set()


def min_cacheable_tokens(model: str) -> int:
    """The smallest prefix, in tokens, that this model caches."""
    lowered = model.lower()
    for pattern, minimum in _MINIMUMS:
        if pattern.search(lowered):
            return minimum
    return DEFAULT_MIN_TOKENS


def estimate_tokens(value: Any) -> int:
    """Token estimate of a text or JSON-able value (see CHARS_PER_TOKEN)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return int(len(text) / CHARS_PER_TOKEN)


def _blocks(params: dict[str, Any]) -> Iterator[tuple[dict[str, Any], int]]:
    """Every block of the prefix in API order with its own token estimate."""
    for tool in params.get("tools") or []:
        yield tool, estimate_tokens(tool)
    system = params.get("system")
    if isinstance(system, list):
        for block in system:
            yield block, estimate_tokens(block.get("text", ""))
    elif isinstance(system, str):
        yield {}, estimate_tokens(system)
    for message in params.get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    yield block, estimate_tokens(block)
        else:
            yield {}, estimate_tokens(content or "")


def place_breakpoints(task: str, params: dict[str, Any]) -> list[int]:
    """Keep the cache marks whose prefix reaches the model's minimum; return their prefix sizes.

    Works in place on `params`: prepare_call builds system and tool blocks afresh, and
    marked message blocks are copied here, so no caller's data changes.
    """
    params["messages"] = [_copied(message) for message in params.get("messages") or []]
    minimum = min_cacheable_tokens(str(params.get("model", "")))
    marked: list[tuple[dict[str, Any], int]] = []
    prefix = 0
    for block, tokens in _blocks(params):
        prefix += tokens
        if block.get("cache_control"):
            marked.append((block, prefix))
    kept: list[int] = []
    short: list[int] = []
    for block, size in marked:
        if size < minimum:
            block.pop("cache_control")
            short.append(size)
    qualifying = [(block, size) for block, size in marked if size >= minimum]
    # The API takes at most four marks; the longest prefixes save the most.
    for block, _ in qualifying[:-MAX_BREAKPOINTS]:
        block.pop("cache_control")
    kept = [size for _, size in qualifying[-MAX_BREAKPOINTS:]]
    if short and not kept:
        _warn_short(task, str(params.get("model", "")), max(short), minimum)
    return kept


def _copied(message: Any) -> Any:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list) or not any(
        isinstance(block, dict) and block.get("cache_control") for block in content
    ):
        return message
    return {**message, "content": [dict(b) if isinstance(b, dict) else b for b in content]}


def _warn_short(task: str, model: str, size: int, minimum: int) -> None:
    if (task, model) in _warned:
        return
    _warned.add((task, model))
    log.warning(
        "task %r marks a ~%d-token prefix for caching, %d short of %s's minimum of %d tokens: "
        "not cached (the mark is dropped)",
        task,
        size,
        minimum - size,
        model,
        minimum,
    )
