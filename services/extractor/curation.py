"""Curated fields: what an admin set is never overwritten by extraction.

A topic records the fields an admin set in `metadata.curated` (label, description, type,
learning_relevance) and whether an admin created it (`metadata.created_by_admin`); a locked
relevance counts as curated. Extraction keeps those fields and turns a differing extracted
value into a suggestion for the admins instead.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from services.extractor.ports import ExtractorStore
from shared.store import Suggestion, Topic

CURATABLE = ("label", "description", "type", "learning_relevance")


def curated_fields(topic: Topic, marks: Iterable[str] = ()) -> set[str]:
    """The fields of a topic an admin set (its metadata, plus the store's curation marks)."""
    raw = [*(topic.metadata.model_dump().get("curated") or []), *marks]
    fields = {str(f) for f in raw if str(f) in CURATABLE}
    if topic.relevance_locked:
        fields.add("learning_relevance")
    return fields


def is_protected(topic: Topic, marks: Iterable[str] = ()) -> bool:
    """Whether an admin made or curated the topic (it is flagged, never silently removed)."""
    meta = topic.metadata.model_dump()
    marks = set(marks)
    return (
        bool(meta.get("created_by_admin"))
        or "created" in marks
        or bool(curated_fields(topic, marks))
    )


async def curation_marks(store: ExtractorStore, topic_ids: Iterable[str]) -> dict[str, set[str]]:
    """The store's curation marks of these topics, as field names."""
    marks = await store.curation.of(list(topic_ids))
    return {topic_id: {m.field for m in found} for topic_id, found in marks.items()}


@dataclass(frozen=True)
class FieldSuggestion:
    """An extracted value that differs from an admin's."""

    topic_id: str
    field: str
    curated: str
    extracted: str


def keep_curated(
    planned: Iterable[Topic],
    existing: Mapping[str, Topic],
    marks: Mapping[str, set[str]] | None = None,
) -> tuple[list[Topic], list[FieldSuggestion]]:
    """The planned topics with every curated field restored, and the differences found."""
    out: list[Topic] = []
    suggestions: list[FieldSuggestion] = []
    marks = marks or {}
    for topic in planned:
        before = existing.get(topic.id)
        fields = curated_fields(before, marks.get(topic.id, ())) if before is not None else set()
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


CURATED_FIELD = "curated_field"
"""Suggestion context kind: an extraction differs from a field an admin set."""


async def suggest_differences(
    store: ExtractorStore, found: Iterable[FieldSuggestion], planned: Mapping[str, Topic], *,
    source_name: str, source_id: str,
) -> int:  # fmt: skip
    """Store each differing extracted value as a pending suggestion for the admins.

    The id derives from (topic, field, value), so a redelivery or a second source saying
    the same thing adds nothing; an empty extracted value is no suggestion.
    """
    created = 0
    for item in found:
        topic = planned.get(item.topic_id)
        if topic is None or not item.extracted.strip():
            continue
        digest = hashlib.sha256(f"{item.topic_id}|{item.field}|{item.extracted}".encode())
        suggestion_id = f"field-{digest.hexdigest()[:16]}"
        if await store.suggestions.get(suggestion_id) is not None:
            continue
        shown = topic.model_dump(include={"id", "label", "type", "description",
                                          "learning_relevance"})  # fmt: skip
        shown[item.field] = item.extracted
        await store.suggestions.create(Suggestion(
            id=suggestion_id, proposed_by="extractor",
            delta={"reason": f"{source_name} describes the {item.field} of {item.topic_id} "
                             "differently from what an admin set", "topics": [shown]},
            context={"kind": CURATED_FIELD, "topic_id": item.topic_id, "field": item.field,
                     "curated": item.curated, "extracted": item.extracted,
                     "source_id": source_id, "source": source_name},
        ))  # fmt: skip
        created += 1
    return created
