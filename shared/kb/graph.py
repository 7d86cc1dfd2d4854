"""Graph deltas proposed in chat: the model and its validation against the KB."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from shared.kb.merge import MergePlan, plan_merge
from shared.kb.models import (
    KEBAB_ID_RE,
    MAX_ID_CHARS,
    RelationType,
    Relevance,
    TopicLike,
    TopicType,
    normalise_relation,
    to_kebab_id,
)

MAX_DELTA_TOPICS = 3
MAX_DELTA_RELATIONS = 5
MAX_LABEL_CHARS = 200
MAX_DESCRIPTION_CHARS = 2000
MAX_REASON_CHARS = 1000

__all__ = [
    "MAX_DELTA_RELATIONS",
    "MAX_DELTA_TOPICS",
    "DeltaRelation",
    "DeltaTopic",
    "GraphDelta",
    "MergePlan",
    "normalise_relation",
    "plan_merge",
    "validate_delta",
]


class DeltaTopic(BaseModel):
    """A topic a delta adds."""

    model_config = ConfigDict(frozen=True, str_strip_whitespace=True)

    id: str = Field(min_length=1, max_length=MAX_ID_CHARS, pattern=KEBAB_ID_RE.pattern)
    label: str = Field(min_length=1, max_length=MAX_LABEL_CHARS)
    type: TopicType
    description: str = Field(default="", max_length=MAX_DESCRIPTION_CHARS)
    learning_relevance: Relevance = "standard"


class DeltaRelation(BaseModel):
    """A typed relation a delta adds between two topic ids."""

    model_config = ConfigDict(frozen=True, str_strip_whitespace=True)

    source: str = Field(min_length=1, max_length=MAX_ID_CHARS, pattern=KEBAB_ID_RE.pattern)
    target: str = Field(min_length=1, max_length=MAX_ID_CHARS, pattern=KEBAB_ID_RE.pattern)
    type: RelationType
    description: str = Field(default="", max_length=MAX_DESCRIPTION_CHARS)


class GraphDelta(BaseModel):
    """A small proposed KB change (≤ 3 topics, ≤ 5 relations) with the reason for it."""

    model_config = ConfigDict(frozen=True, str_strip_whitespace=True)

    reason: str = Field(min_length=1, max_length=MAX_REASON_CHARS)
    topics: tuple[DeltaTopic, ...] = Field(default=(), max_length=MAX_DELTA_TOPICS)
    relations: tuple[DeltaRelation, ...] = Field(default=(), max_length=MAX_DELTA_RELATIONS)

    @field_validator("topics", "relations", mode="before")
    @classmethod
    def _list_to_tuple(cls, value: Any) -> Any:
        return tuple(value) if isinstance(value, list) else value


def _clean_topic(raw: Any) -> DeltaTopic | None:
    if isinstance(raw, BaseModel):
        raw = raw.model_dump()
    if not isinstance(raw, Mapping):
        return None
    item = dict(raw)
    for key in ("id", "label", "type", "learning_relevance"):
        if isinstance(item.get(key), str):
            item[key] = item[key].strip()
    # Case is noise from the model; anything else non-kebab is rejected by the schema.
    for key in ("id", "type", "learning_relevance"):
        if isinstance(item.get(key), str):
            item[key] = item[key].lower()
    if not item.get("id") and isinstance(item.get("label"), str) and item["label"]:
        try:
            item["id"] = to_kebab_id(item["label"])
        except ValueError:
            return None
    if isinstance(item.get("description"), str):
        item["description"] = item["description"].strip()[:MAX_DESCRIPTION_CHARS]
    if item.get("learning_relevance") in (None, ""):
        item.pop("learning_relevance", None)
    try:
        return DeltaTopic.model_validate(item)
    except ValidationError:
        return None


def _raw_relation(raw: Any) -> tuple[str, str, RelationType, str] | None:
    if isinstance(raw, BaseModel):
        raw = raw.model_dump()
    if not isinstance(raw, Mapping):
        return None
    source, target, kind = raw.get("source"), raw.get("target"), raw.get("type")
    description = raw.get("description") or ""
    if not (
        isinstance(source, str)
        and isinstance(target, str)
        and isinstance(kind, str)
        and isinstance(description, str)
    ):
        return None
    normal = normalise_relation(source.strip().lower(), target.strip().lower(), kind)
    if normal is None:
        return None
    return (*normal, description.strip()[:MAX_DESCRIPTION_CHARS])


def validate_delta(
    delta: Mapping[str, Any] | GraphDelta,
    topics: Iterable[TopicLike] | Mapping[str, TopicLike],
) -> GraphDelta | None:
    """Clean a proposed delta against the KB; None when its shape is wrong or nothing is left."""
    raw = delta.model_dump() if isinstance(delta, GraphDelta) else delta
    if not isinstance(raw, Mapping):
        return None
    reason = raw.get("reason")
    raw_topics, raw_relations = raw.get("topics") or [], raw.get("relations") or []
    if not isinstance(reason, str) or not reason.strip():
        return None
    if not isinstance(raw_topics, (list, tuple)) or not isinstance(raw_relations, (list, tuple)):
        return None

    by_id: dict[str, str] = {}
    by_label: dict[str, str] = {}
    for topic in topics.values() if isinstance(topics, Mapping) else topics:
        by_id[topic.id] = topic.id
        by_label.setdefault((topic.label or "").strip().casefold(), topic.id)
    alias: dict[str, str] = {}  # dropped duplicate id → the id it stands for
    kept: list[DeltaTopic] = []
    for item in raw_topics:
        topic = _clean_topic(item)
        if topic is None:
            continue
        existing = by_id.get(topic.id) or by_label.get(topic.label.casefold())
        if existing is not None:
            alias.setdefault(topic.id, existing)
            continue
        if len(kept) >= MAX_DELTA_TOPICS:
            continue
        kept.append(topic)
        by_id[topic.id] = topic.id
        by_label.setdefault(topic.label.casefold(), topic.id)

    relations: dict[tuple[str, str, str], DeltaRelation] = {}
    for item in raw_relations:
        parsed = _raw_relation(item)
        if parsed is None:
            continue
        source, target, kind, description = parsed
        source, target = alias.get(source, source), alias.get(target, target)
        if source not in by_id or target not in by_id or source == target:
            continue
        key = (source, target, kind)
        if key in relations or len(relations) >= MAX_DELTA_RELATIONS:
            continue
        try:
            relations[key] = DeltaRelation(
                source=source, target=target, type=kind, description=description
            )
        except ValidationError:  # a legacy, non-kebab KB id cannot be referenced
            continue
    if not kept and not relations:
        return None
    return GraphDelta(
        reason=reason.strip()[:MAX_REASON_CHARS],
        topics=tuple(kept),
        relations=tuple(relations.values()),
    )
