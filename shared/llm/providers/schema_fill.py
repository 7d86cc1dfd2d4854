"""Deterministic instances of a JSON schema, filled with text taken from the request."""

from __future__ import annotations

import random
import re
import unicodedata
import uuid
from collections.abc import Callable
from typing import Any

_MAX_DEPTH = 8
_SLUG_KEYS = ("id", "slug", "key", "ref", "source", "target", "handle")
_SHORT_KEYS = ("name", "title", "label", "topic", "heading", "term", "tag", "keyword")
_SLUG_PATTERNS: tuple[Callable[[list[str]], str], ...] = (
    lambda words: "-".join(words),  # kebab-case
    lambda words: "_".join(words),  # snake_case
    lambda words: "".join(words),  # lowercase alnum
    lambda words: "-".join(words).upper(),
    lambda words: " ".join(words),
)


def slugify(text: str, *, max_words: int = 4) -> str:
    """Lowercase ASCII kebab-case from free text ("Onboarding – Week 1" → "onboarding-week-1")."""
    return "-".join(words_of(text)[:max_words])


def words_of(text: str) -> list[str]:
    """ASCII lowercase alphanumeric words (accents stripped)."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.findall(r"[a-z0-9]+", ascii_text.lower())


class SchemaFiller:
    """Builds a value valid for a (pydantic-generated) JSON schema; same inputs → same value."""

    def __init__(self, root: dict[str, Any], *, texts: list[str], rng: random.Random) -> None:
        self.root = root
        self.texts = [t for t in texts if t.strip()] or ["offline placeholder text"]
        self.rng = rng
        # One cursor per field name, so the n-th item of a list takes its id, title and
        # summary from the n-th sentence (text order is kept: first heading → first item).
        self._start = 0
        self._cursors: dict[str, int] = {}

    def fill(self) -> Any:
        """A value for the root schema."""
        return self._value(self.root, key="", depth=0)

    # -- dispatch -------------------------------------------------------------------------

    def _resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            ref = schema["$ref"]
            if not ref.startswith("#/"):
                raise ValueError(f"cannot resolve non-local $ref {ref!r}")
            target: Any = self.root
            for part in ref[2:].split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        if "allOf" in schema:
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                merged = {**self._resolve(part), **merged}
            schema = merged
        return schema

    def _value(self, schema: dict[str, Any] | bool, *, key: str, depth: int) -> Any:
        if schema is True or schema == {}:
            return self._text(key, {})
        if schema is False:
            return None
        schema = self._resolve(schema)
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return schema["enum"][self.rng.randrange(len(schema["enum"]))]
        for union in ("anyOf", "oneOf"):
            if union in schema:
                options = [o for o in schema[union] if self._resolve(o).get("type") != "null"]
                if not options:
                    return None
                # Beyond the depth limit prefer null (if allowed) to stop recursive models.
                if depth >= _MAX_DEPTH and len(options) < len(schema[union]):
                    return None
                return self._value(options[0], key=key, depth=depth)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind is None:
            kind = "object" if "properties" in schema else "array" if "items" in schema else ""
        if kind == "object":
            return self._object(schema, depth)
        if kind == "array":
            return self._array(schema, key=key, depth=depth)
        if kind == "integer":
            return self._integer(schema)
        if kind == "number":
            return self._number(schema)
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "null":
            return None
        return self._text(key, schema)

    # -- containers -----------------------------------------------------------------------

    def _object(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        properties: dict[str, Any] = schema.get("properties", {})
        required = set(schema.get("required", []))
        out: dict[str, Any] = {}
        for name, sub in properties.items():
            if name not in required and depth >= _MAX_DEPTH:
                continue
            out[name] = self._value(sub, key=name, depth=depth + 1)
        return out

    def _array(self, schema: dict[str, Any], *, key: str, depth: int) -> list[Any]:
        low = int(schema.get("minItems", 0))
        high = schema.get("maxItems")
        count = 0 if depth >= _MAX_DEPTH else 3
        count = max(low, count if high is None else min(count, int(high)))
        items = schema.get("items", {})
        prefix = schema.get("prefixItems", [])
        out: list[Any] = []
        seen: set[str] = set()
        attempts = 0
        while len(out) < count and attempts < count * 5 + 5:
            attempts += 1
            sub = prefix[len(out)] if len(out) < len(prefix) else items
            value = self._value(sub, key=key.rstrip("s"), depth=depth + 1)
            marker = repr(value)
            if schema.get("uniqueItems") and marker in seen:
                continue
            seen.add(marker)
            out.append(value)
        return out

    # -- scalars --------------------------------------------------------------------------

    def _integer(self, schema: dict[str, Any]) -> int:
        low = schema.get("minimum", 0)
        if "exclusiveMinimum" in schema:
            low = max(low, schema["exclusiveMinimum"] + 1)
        high = schema.get("maximum", max(low, 0) + 10)
        if "exclusiveMaximum" in schema:
            high = min(high, schema["exclusiveMaximum"] - 1)
        value = self.rng.randint(int(low), int(max(low, high)))
        step = schema.get("multipleOf")
        if isinstance(step, int) and step > 0:
            value = -(-int(low) // step) * step  # the smallest multiple within bounds
        return value

    def _number(self, schema: dict[str, Any]) -> float:
        low = float(schema.get("minimum", schema.get("exclusiveMinimum", 0.0)))
        high = float(schema.get("maximum", schema.get("exclusiveMaximum", low + 1.0)))
        # Strictly inside the bounds, so exclusive limits hold too.
        value = round(low + (high - low) * (0.25 + 0.5 * self.rng.random()), 3)
        return value if low < value < high else (low + high) / 2

    def _take_index(self, key: str) -> int:
        index = self._cursors.get(key, self._start)
        self._cursors[key] = index + 1
        return index

    def _text(self, key: str, schema: dict[str, Any]) -> str:
        fmt = schema.get("format")
        if fmt == "date-time":
            return "2024-01-01T00:00:00Z"
        if fmt == "date":
            return "2024-01-01"
        if fmt == "email":
            return "offline@example.com"
        if fmt in ("uri", "url"):
            return "https://example.com/offline"
        if fmt == "uuid":
            return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        index = self._take_index(key)
        sentence = self.texts[index % len(self.texts)]
        lowered = key.lower()
        if "pattern" in schema:
            value = self._patterned(schema["pattern"], sentence)
        elif any(lowered == k or lowered.endswith("_" + k) for k in _SLUG_KEYS):
            value = slugify(sentence) or "item"
        elif any(k in lowered for k in _SHORT_KEYS):
            value = " ".join(sentence.split()[:6])
        else:
            value = sentence
        return self._fit_length(value, schema, index)

    def _patterned(self, pattern: str, sentence: str) -> str:
        regex = re.compile(pattern)
        words = words_of(sentence)[:4] or ["item"]
        for build in _SLUG_PATTERNS:
            candidate = build(words)
            if regex.search(candidate):
                return candidate
        return sentence  # validation will say what the pattern wanted

    def _fit_length(self, value: str, schema: dict[str, Any], index: int) -> str:
        low = int(schema.get("minLength", 0))
        high = schema.get("maxLength")
        extra = index + 1
        while len(value) < low:
            # Pad with the sentences that follow this one (cycling), not with itself.
            value = f"{value} {self.texts[extra % len(self.texts)]}".strip()
            extra += 1
        if high is not None and len(value) > int(high):
            cut = value[: int(high)]
            space = cut.rfind(" ")
            # Cut at a word boundary when that still satisfies minLength.
            value = cut[:space] if space >= max(low, 1) else cut
            value = value.rstrip("-_ ") if len(value.rstrip("-_ ")) >= low else value
        return value
