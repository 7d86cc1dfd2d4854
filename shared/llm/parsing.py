"""Text → JSON for schema calls: strip code fences, scan for a balanced JSON value, validate."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from shared.llm.errors import LLMOutputError, LLMValidationError

_FENCE_RE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\r?\n?(.*?)```", re.DOTALL)
_CLOSERS = {"{": "}", "[": "]"}
_MAX_EXCERPT = 200


def fenced_blocks(text: str) -> list[str]:
    """The contents of every ``` fenced block, in order (the language tag dropped)."""
    return [match.group(2) for match in _FENCE_RE.finditer(text)]


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the value opened at `start`, or None if it never closes cleanly."""
    stack = [_CLOSERS[text[start]]]
    in_string = False
    escaped = False
    for i in range(start + 1, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in _CLOSERS:
            stack.append(_CLOSERS[ch])
        elif ch in "}]":
            if ch != stack.pop():
                return None  # mismatched bracket: not JSON from this start
            if not stack:
                return i + 1
    return None


def iter_json_candidates(text: str) -> Iterator[str]:
    """Every balanced `{…}` / `[…]` span, outermost first, scanning left to right."""
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch in _CLOSERS:
            end = _balanced_end(text, i)
            if end is not None:
                yield text[i:end]
        i += 1


def extract_json(text: str) -> Any:
    """The first JSON object/array in the text (fenced blocks first); LLMOutputError if none."""
    for source in [*fenced_blocks(text), text]:
        for candidate in iter_json_candidates(source):
            try:
                return json.loads(candidate)
            except ValueError:
                continue
    excerpt = text[:_MAX_EXCERPT] + ("…" if len(text) > _MAX_EXCERPT else "")
    raise LLMOutputError(f"no JSON object or array found in the model's text: {excerpt!r}")


@lru_cache(maxsize=512)
def type_adapter(schema: Any) -> TypeAdapter[Any]:
    """A cached TypeAdapter (building one per call is the expensive part of validation)."""
    return TypeAdapter(schema)


def validate_output(schema: Any, data: Any, *, what: str) -> Any:
    """Validate data against a pydantic model (or any type); LLMValidationError on mismatch."""
    try:
        if isinstance(schema, type) and issubclass(schema, BaseModel):
            return schema.model_validate(data)
        return type_adapter(schema).validate_python(data)
    except ValidationError as exc:
        name = getattr(schema, "__name__", repr(schema))
        raise LLMValidationError(f"{what} does not match {name}: {describe_errors(exc)}") from None


def describe_errors(exc: ValidationError, *, shown: int = 3) -> str:
    """`topics.0.id: String should match pattern …; (+2 more)`: no reprs, no input values."""
    parts = []
    for err in exc.errors(include_url=False, include_input=False, include_context=False)[:shown]:
        where = ".".join(str(p) for p in err["loc"]) or "value"
        parts.append(f"{where}: {err['msg'].removeprefix('Value error, ')}")
    if exc.error_count() > shown:
        parts.append(f"(+{exc.error_count() - shown} more)")
    return "; ".join(parts)


def parse_text_output(text: str, schema: Any) -> Any:
    """Find the JSON in a model's text reply and validate it against the schema."""
    return validate_output(schema, extract_json(text), what="the model's JSON output")
