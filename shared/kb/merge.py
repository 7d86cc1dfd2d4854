"""Plan how extracted topics and relations merge into the KB (upserts only, never deletes)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from shared.kb.models import (
    RELEVANCE_LEVELS,
    TOPIC_TYPES,
    KbInputError,
    KbRelation,
    KbTopic,
    RelationLike,
    TopicLike,
    is_kebab_id,
    normalise_relation,
)


@dataclass(frozen=True, slots=True)
class MergePlan:
    """What to upsert and insert, with counts; there is deliberately no delete list.

    `pending` holds valid relations with an endpoint that exists neither in the KB nor in
    the result: the caller may keep them until that topic appears (they are not dropped).
    """

    topics: tuple[KbTopic, ...]
    relations: tuple[KbRelation, ...]
    added_ids: tuple[str, ...]
    updated_ids: tuple[str, ...]
    topics_dropped: int = 0
    relations_dropped: int = 0
    aliases: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    pending: tuple[KbRelation, ...] = ()

    @property
    def topics_added(self) -> int:
        """Topics that did not exist before."""
        return len(self.added_ids)

    @property
    def topics_updated(self) -> int:
        """Existing topics whose label, type, description or relevance actually changed."""
        return len(self.updated_ids)

    @property
    def relations_added(self) -> int:
        """Relations not already in the KB."""
        return len(self.relations)

    @property
    def changed_ids(self) -> tuple[str, ...]:
        """Added then updated topic ids (for kb.updated)."""
        return self.added_ids + self.updated_ids

    @property
    def is_empty(self) -> bool:
        """Whether applying the plan would change nothing."""
        return not self.topics and not self.relations


def _get(item: Any, name: str, default: Any = None) -> Any:
    if isinstance(item, Mapping):
        return item.get(name, default)
    return getattr(item, name, default)


def _as_record(topic: TopicLike) -> KbTopic:
    return KbTopic(
        id=topic.id,
        label=_get(topic, "label") or "",
        type=_get(topic, "type") or "concept",
        description=_get(topic, "description") or "",
        learning_relevance=_get(topic, "learning_relevance") or "standard",
        relevance_locked=bool(_get(topic, "relevance_locked", False)),
    )


def _merged(base: KbTopic | None, item: Mapping[str, Any], topic_id: str) -> KbTopic | None:
    """The topic after applying one extracted item to its current state; None if invalid."""
    label, kind = item.get("label"), item.get("type")
    description = item.get("description") or ""
    relevance = item.get("learning_relevance")
    if base is None and not is_kebab_id(topic_id):
        return None
    if not isinstance(label, str) or not label.strip():
        return None
    if kind not in TOPIC_TYPES or not isinstance(description, str):
        return None
    relevance = relevance if relevance in RELEVANCE_LEVELS else None
    if base is None:
        return KbTopic(topic_id, label.strip(), kind, description.strip(), relevance or "standard")
    return KbTopic(
        id=base.id,
        label=label.strip(),
        type=kind,
        # An extraction that found nothing to say must not erase what an earlier one said.
        description=description.strip() or base.description,
        learning_relevance=(
            base.learning_relevance if base.relevance_locked or relevance is None else relevance
        ),
        relevance_locked=base.relevance_locked,
        source=base.source,
    )


def plan_merge(
    existing: Mapping[str, TopicLike],
    known_relations: Iterable[RelationLike],
    new_topics: Iterable[TopicLike],
    new_relations: Iterable[RelationLike],
) -> MergePlan:
    """Upsert plan for one extraction result against the current KB; pure, never deletes."""
    if not isinstance(existing, Mapping):
        raise KbInputError("existing must be a mapping of topic id → topic")
    before = {topic_id: _as_record(topic) for topic_id, topic in existing.items()}
    planned: dict[str, KbTopic] = {}
    by_label = {t.label.strip().casefold(): t.id for t in before.values() if t.label.strip()}
    aliases: dict[str, str] = {}
    topics_dropped = 0
    invalid: set[str] = set()  # ids this result gave invalid topics: their relations go too
    for item in new_topics:
        fields = _fields(item)
        topic_id, label = fields["id"], fields["label"]
        if not isinstance(topic_id, str):
            topics_dropped += 1
            continue
        target = topic_id if topic_id in before or topic_id in planned else None
        if target is None and isinstance(label, str):
            # Same thing under a new id (a later chunk re-coined it): merge, don't duplicate.
            target = by_label.get(label.strip().casefold())
        base = (planned.get(target) or before.get(target)) if target else None
        merged = _merged(base, fields, target or topic_id)
        if merged is None:
            invalid.add(topic_id)
            topics_dropped += 1
            continue
        if merged.id != topic_id:
            aliases[topic_id] = merged.id
        planned[merged.id] = merged
        by_label.setdefault(merged.label.casefold(), merged.id)

    added = tuple(t for t in planned if t not in before)
    updated = tuple(t for t in planned if t in before and planned[t] != before[t])
    exists = before.keys() | planned.keys()
    known: set[tuple[str, str, str]] = set()
    for relation in known_relations:
        source, target = _get(relation, "source"), _get(relation, "target")
        normal = normalise_relation(source, target, _get(relation, "type"))
        if normal is not None:
            known.add(normal)
    relations: dict[tuple[str, str, str], KbRelation] = {}
    pending: dict[tuple[str, str, str], KbRelation] = {}
    relations_dropped = 0
    for rel in new_relations:
        source, target, kind = _get(rel, "source"), _get(rel, "target"), _get(rel, "type")
        normal = None
        if isinstance(source, str) and isinstance(target, str):
            source, target = aliases.get(source, source), aliases.get(target, target)
            normal = normalise_relation(source, target, kind)
        if normal is None or normal[0] == normal[1] or not all(map(is_kebab_id, normal[:2])):
            relations_dropped += 1
            continue
        if normal in known or normal in relations or normal in pending:
            continue
        description = _get(rel, "description")
        note = description.strip() if isinstance(description, str) else ""
        missing = {normal[0], normal[1]} - exists
        if missing & (invalid - exists):
            relations_dropped += 1
            continue
        into = pending if missing else relations
        into[normal] = KbRelation(*normal, note)
    return MergePlan(
        topics=tuple(planned[t] for t in (*added, *updated)),
        relations=tuple(relations.values()),
        added_ids=added,
        updated_ids=updated,
        topics_dropped=topics_dropped,
        relations_dropped=relations_dropped,
        aliases=MappingProxyType(aliases),
        pending=tuple(pending.values()),
    )


def _fields(item: Any) -> dict[str, Any]:
    names = ("id", "label", "type", "description", "learning_relevance")
    return {name: _get(item, name) for name in names}
