"""What `lookup_topic` returns: a topic's full description, relations and generated content."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from services.r42.ports import R42Store
from shared.kb import to_kebab_id
from shared.store import Content, Topic

LOOKUP_CONTENT_CHARS = 6000
MAX_LOOKUP_RELATIONS = 25
MAX_ID_ECHO = 120
# Keys of generated content that hold layout or bookkeeping rather than prose.
_SKIP_KEYS = frozenset(
    {"id", "type", "kind", "format", "url", "href", "image", "icon", "color", "colour",
     "style", "layout", "prompt_version", "version", "topic_id", "generated_at"}
)  # fmt: skip


def _strings(value: Any, out: list[str], budget: list[int]) -> None:
    if budget[0] <= 0:
        return
    if isinstance(value, str):
        text = " ".join(value.split())
        if text:
            out.append(text)
            budget[0] -= len(text) + 1
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if str(key).lower() not in _SKIP_KEYS:
                _strings(item, out, budget)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _strings(item, out, budget)


def content_text(content: Content | None, *, limit: int) -> str:
    """The prose of a topic's generated content (article first, else slides, else infographic)."""
    if content is None or limit <= 0:
        return ""
    for part in (content.article, content.slides, content.infographic):
        if part:
            lines: list[str] = []
            _strings(part, lines, [limit])
            text = "\n".join(lines)
            if text:
                return text[:limit]
    return ""


@dataclass(frozen=True)
class LookupResult:
    """One lookup_topic call: the id asked for and the topic found (None when unknown)."""

    requested: str
    topic: Topic | None
    text: str
    is_error: bool


def _kebab(text: str) -> str | None:
    try:
        return to_kebab_id(text)
    except ValueError:
        return None


def normalise_id(raw: str) -> str:
    """The id as the model might send it: trimmed, brackets and quotes removed, lowercased."""
    return raw.strip().strip("[]'\"` ").lower()


async def lookup_topic(
    store: R42Store, raw_id: str, *, labels: Mapping[str, str] | None = None
) -> LookupResult:
    """Read a topic in full from the store; an unknown id is an error result, not an exception."""
    wanted = normalise_id(raw_id)
    topic = await store.topics.get(wanted) if wanted else None
    if topic is None and wanted:
        # Models sometimes pass the label instead of the id.
        alias = (labels or {}).get(wanted.casefold()) or _kebab(wanted)
        topic = await store.topics.get(alias) if alias else None
    if topic is None:
        shown = raw_id.strip()[:MAX_ID_ECHO] or "(leeg)"
        return LookupResult(
            requested=raw_id,
            topic=None,
            text=(
                f"Onbekend onderwerp-id {shown!r}: dat onderwerp staat niet in de kennisgraaf. "
                "Gebruik een id uit de context, of zeg dat het niet in de kennisgraaf staat."
            ),
            is_error=True,
        )
    relations = await store.relations.list(topic_id=topic.id)
    content = await store.content.get(topic.id)
    lines = [
        f"[{topic.id}] {topic.label} ({topic.type})",
        f"Beschrijving: {topic.description.strip() or '(geen beschrijving)'}",
    ]
    if relations:
        lines.append("Relaties:")
        for relation in relations[:MAX_LOOKUP_RELATIONS]:
            note = f": {relation.description}" if relation.description else ""
            lines.append(f"- {relation.source} {relation.type} {relation.target}{note}")
    body = content_text(content, limit=LOOKUP_CONTENT_CHARS)
    if body:
        lines += ["Inhoud (gegenereerd leermateriaal):", body]
    return LookupResult(requested=raw_id, topic=topic, text="\n".join(lines), is_error=False)
