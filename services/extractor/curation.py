"""Curated fields: what an admin set is never overwritten by extraction.

A topic records the fields an admin set in `metadata.curated` (label, description, type,
learning_relevance) and whether an admin created it (`metadata.created_by_admin`); a locked
relevance counts as curated. Extraction keeps those fields and turns a differing extracted
value into a suggestion for the admins instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from shared.store import Topic

CURATABLE = ("label", "description", "type", "learning_relevance")


def curated_fields(topic: Topic) -> set[str]:
    """The fields of a topic an admin set."""
    raw = topic.metadata.model_dump().get("curated") or []
    fields = {str(f) for f in raw if str(f) in CURATABLE}
    if topic.relevance_locked:
        fields.add("learning_relevance")
    return fields


def is_protected(topic: Topic) -> bool:
    """Whether an admin made or curated the topic (it is flagged, never silently removed)."""
    meta = topic.metadata.model_dump()
    return bool(meta.get("created_by_admin")) or bool(curated_fields(topic))


@dataclass(frozen=True)
class FieldSuggestion:
    """An extracted value that differs from an admin's."""

    topic_id: str
    field: str
    curated: str
    extracted: str


def keep_curated(
    planned: Iterable[Topic], existing: Mapping[str, Topic]
) -> tuple[list[Topic], list[FieldSuggestion]]:
    """The planned topics with every curated field restored, and the differences found."""
    out: list[Topic] = []
    suggestions: list[FieldSuggestion] = []
    for topic in planned:
        before = existing.get(topic.id)
        fields = curated_fields(before) if before is not None else set()
        if before is None or not fields:
            out.append(topic)
            continue
        update: dict[str, object] = {}  # metadata (curated, created_by_admin) is carried over
        for name in sorted(fields):
            mine, theirs = getattr(before, name), getattr(topic, name)
            if mine != theirs:
                suggestions.append(FieldSuggestion(topic.id, name, str(mine), str(theirs)))
                update[name] = mine
        update["relevance_locked"] = before.relevance_locked
        out.append(topic.model_copy(update=update))
    return out, suggestions
