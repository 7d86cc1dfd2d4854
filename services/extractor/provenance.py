"""Provenance: which sources assert which topics and relations, and retracting them.

Every asserter (an uploaded source's id, `handbook:<path>` for a handbook file, `admin` for
an admin's own edits) asserts topics and relations: one row per asserter and subject in
the store's provenance repository (chunk 0: an asserter's record is whole), so recording or
retracting a source costs what that source asserts, never the size of the graph. Which
source is the current version of a document name is the store's current_sources.

A topic whose last asserter is retracted is removed, unless an admin made or curated it:
then it stays, flagged for review. A relation whose last asserter is retracted is removed.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from services.extractor.curation import curation_marks, is_protected
from services.extractor.ports import ExtractorStore
from shared.kb import MergePlan, normalise_relation
from shared.store import Assertion, KbChanges, RelationKey, Topic, TopicMetadata
from shared.store import Retraction as Retracted

log = logging.getLogger(__name__)

ADMIN = "admin"
RelKey = tuple[str, str, str]


@dataclass
class Assertions:
    """What one asserter asserts."""

    topics: set[str] = field(default_factory=set)
    relations: set[RelKey] = field(default_factory=set)


@dataclass
class Retraction:
    """What retracting assertions removed from the graph, and what stays for review."""

    topics_deleted: list[str] = field(default_factory=list)
    relations_deleted: list[RelKey] = field(default_factory=list)
    flagged: list[str] = field(default_factory=list)

    @property
    def removed_ids(self) -> list[str]:
        """Topic ids gone from the graph."""
        return sorted(self.topics_deleted)

    def extend(self, other: Retraction) -> None:
        """Add another retraction's results."""
        self.topics_deleted += other.topics_deleted
        self.relations_deleted += other.relations_deleted
        self.flagged += other.flagged


def asserted_by_result(
    plan: MergePlan, existing: Iterable[str], topics: Iterable[object],
    relations: Iterable[object],
) -> Assertions:  # fmt: skip
    """What one extraction result asserts once merged: its topics (re-coined ids mapped to
    the stored ones) and its valid relations between topics that exist."""
    present = {t.id for t in plan.topics} | set(existing)
    asserted = {plan.aliases.get(i, i) for i in (str(getattr(t, "id", "")) for t in topics)}
    keys: set[RelKey] = set()
    for r in relations:
        source, target = str(getattr(r, "source", "")), str(getattr(r, "target", ""))
        source, target = plan.aliases.get(source, source), plan.aliases.get(target, target)
        key = normalise_relation(source, target, str(getattr(r, "type", "")))
        if key and key[0] != key[1] and key[0] in present and key[1] in present:
            keys.add(key)
    return Assertions(asserted & present, keys)


async def supersede(store: ExtractorStore, *, name: str, source_id: str) -> Retraction:
    """`source_id` is now the current version of the document `name`: retract what the
    previous version asserted and this one does not."""
    previous = await store.current_sources.swap(name, source_id)
    if not previous or previous == source_id:
        return Retraction()
    return await retract_all(store, previous)


async def forget_source(store: ExtractorStore, *, name: str, source_id: str) -> Retraction:
    """Retract a deleted source's contributions (and its name when it was current)."""
    await store.current_sources.clear(name, source_id)
    return await retract_all(store, source_id)


async def assertions_of(store: ExtractorStore, asserter: str) -> Assertions:
    """The current record of one asserter."""
    record = Assertions()
    for row in await store.provenance.of_source(asserter):
        if row.relation is not None:
            record.relations.add(row.relation.as_tuple())
        elif row.topic_id is not None:
            record.topics.add(row.topic_id)
    return record


async def asserters_of_topic(store: ExtractorStore, topic_id: str) -> list[str]:
    """Who asserts a topic (empty for a topic recorded before provenance existed)."""
    return (await store.provenance.sources_of([topic_id])).get(topic_id, [])


def relation_key(key: RelKey) -> RelationKey:
    """The store's key of a (source, target, type) triple."""
    return RelationKey.model_validate(dict(zip(("source", "target", "type"), key, strict=True)))


def _rows(
    asserter: str, topics: Iterable[str], relations: Iterable[RelKey], *, version: str = ""
) -> list[Assertion]:
    rows = [Assertion(source_id=asserter, topic_id=t, version=version) for t in sorted(topics)]
    rows += [Assertion(source_id=asserter, relation=relation_key(k), version=version)
             for k in sorted(relations)]  # fmt: skip
    return rows


async def add_assertions(
    store: ExtractorStore, asserter: str, *, topics: Iterable[str], relations: Iterable[RelKey]
) -> None:
    """Record that `asserter` (also) asserts these topics and relations (those that exist)."""
    rows = _rows(asserter, topics, relations)
    if rows:
        await store.provenance.record(rows, skip_missing=True)


async def replace_assertions(
    store: ExtractorStore, asserter: str, *, topics: Iterable[str], relations: Iterable[RelKey]
) -> Retraction:
    """Make `asserter` assert exactly these; what it asserted before and no longer does is
    retracted (removed from the graph when nobody else asserts it)."""
    version = uuid.uuid4().hex[:12]  # this record's rows; the retraction takes the others
    rows = _rows(asserter, topics, relations, version=version)
    if rows:
        await store.provenance.record(rows, skip_missing=True)
    return await _settle(store, asserter, await store.provenance.retract(
        asserter, except_version=version))  # fmt: skip


async def retract_all(store: ExtractorStore, asserter: str) -> Retraction:
    """Retract everything `asserter` asserts (its source was deleted)."""
    return await _settle(store, asserter, await store.provenance.retract(asserter))


async def rename_asserter(store: ExtractorStore, old: str, new: str) -> None:
    """Move a record to a new asserter name (a renamed file with the same content)."""
    await store.provenance.rename_source(old, new)


async def _settle(store: ExtractorStore, asserter: str, retracted: Retracted) -> Retraction:
    """Delete what nobody asserts any more after a retraction (protected topics are flagged)."""
    result = Retraction()
    still = await store.provenance.sources_of(retracted.topic_ids)
    orphans = [t for t in retracted.topic_ids if t not in still]
    topics = {t.id: t for t in await store.topics.get_many(orphans)}
    marks = await curation_marks(store, topics)
    flagged: list[Topic] = []
    for topic_id in orphans:
        topic = topics.get(topic_id)
        if topic is None:
            continue
        if is_protected(topic, marks.get(topic_id, ())):
            meta = topic.metadata.model_dump(exclude_none=True)
            meta["review"] = f"no source asserts it any more (last: {asserter})"
            flagged.append(
                topic.model_copy(update={"metadata": TopicMetadata.model_validate(meta)})
            )
        else:
            result.topics_deleted.append(topic_id)
    deleted = set(result.topics_deleted)
    orphan_relations = [k.as_tuple() for k in retracted.orphan_relations]
    changes = KbChanges(
        topics_upsert=flagged,
        topics_delete=result.topics_deleted,
        relations_delete=[k for k in retracted.orphan_relations
                          if k.source not in deleted and k.target not in deleted],
    )  # fmt: skip
    if not changes.empty:
        await store.apply_kb_changes(changes)
    result.relations_deleted = orphan_relations
    result.flagged = [t.id for t in flagged]
    if result.topics_deleted or result.flagged:
        log.info("retracted %s: %d topic(s) removed, %d flagged for review", asserter,
                 len(result.topics_deleted), len(result.flagged))  # fmt: skip
    return result
