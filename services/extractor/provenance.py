"""Provenance: which sources assert which topics and relations, and retracting them.

Every asserter (an uploaded source's id, `handbook:<path>` for a handbook file, `admin` for
an admin's own edits) has a record of what it asserts; every topic and relation has the
list of its asserters. Both live in the store's key-value settings (both adapters), each
key read and written on its own, so recording or retracting a source costs what that
source asserts, never the size of the graph.

A topic whose last asserter is retracted is removed, unless an admin made or curated it:
then it stays, flagged for review. A relation whose last asserter is retracted is removed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from services.extractor.curation import curation_marks, is_protected
from services.extractor.ports import ExtractorStore
from shared.kb import MergePlan, normalise_relation
from shared.store import KbChanges, RelationKey, Topic, TopicMetadata

log = logging.getLogger(__name__)

ADMIN = "admin"
RelKey = tuple[str, str, str]


def _source_key(asserter: str) -> str:
    return f"provenance:source:{asserter}"


def _topic_key(topic_id: str) -> str:
    return f"provenance:topic:{topic_id}"


def _relation_key(key: RelKey) -> str:
    return "provenance:relation:" + "|".join(key)


@dataclass
class Assertions:
    """What one asserter asserts."""

    topics: set[str] = field(default_factory=set)
    relations: set[RelKey] = field(default_factory=set)

    def to_json(self) -> dict[str, list[str]]:
        """The stored form."""
        relations = sorted("|".join(r) for r in self.relations)
        return {"topics": sorted(self.topics), "relations": relations}

    @classmethod
    def from_json(cls, value: object) -> Assertions:
        """From the stored form (an empty record when missing)."""
        if not isinstance(value, dict):
            return cls()
        relations = set()
        for raw in value.get("relations", []):
            parts = str(raw).split("|")
            if len(parts) == 3:
                relations.add((parts[0], parts[1], parts[2]))
        return cls(topics={str(t) for t in value.get("topics", [])}, relations=relations)


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


def _name_key(name: str) -> str:
    return f"provenance:name:{name}"


async def supersede(store: ExtractorStore, *, name: str, source_id: str) -> Retraction:
    """`source_id` is now the current version of the document `name`: retract what the
    previous version asserted and this one does not."""
    previous = await store.settings.get(_name_key(name))
    await store.settings.set(_name_key(name), source_id)
    if not previous or previous == source_id:
        return Retraction()
    return await retract_all(store, str(previous))


async def forget_source(store: ExtractorStore, *, name: str, source_id: str) -> Retraction:
    """Retract a deleted source's contributions (and its name when it was current)."""
    if await store.settings.get(_name_key(name)) == source_id:
        await store.settings.delete(_name_key(name))
    return await retract_all(store, source_id)


async def assertions_of(store: ExtractorStore, asserter: str) -> Assertions:
    """The current record of one asserter."""
    return Assertions.from_json(await store.settings.get(_source_key(asserter)))


async def asserters_of_topic(store: ExtractorStore, topic_id: str) -> list[str]:
    """Who asserts a topic (empty for a topic recorded before provenance existed)."""
    return list(await store.settings.get(_topic_key(topic_id)) or [])


async def _link(store: ExtractorStore, key: str, asserter: str, *, add: bool) -> list[str]:
    def change(current: object) -> list[str]:
        names = set(current) if isinstance(current, list) else set()
        (names.add if add else names.discard)(asserter)
        return sorted(names)

    return list(await store.settings.update(key, change, default=[]))


async def add_assertions(
    store: ExtractorStore, asserter: str, *, topics: Iterable[str], relations: Iterable[RelKey]
) -> None:
    """Record that `asserter` (also) asserts these topics and relations."""
    record = await assertions_of(store, asserter)
    new_topics = set(topics) - record.topics
    new_relations = set(relations) - record.relations
    if not new_topics and not new_relations:
        return
    for topic_id in sorted(new_topics):
        await _link(store, _topic_key(topic_id), asserter, add=True)
    for key in sorted(new_relations):
        await _link(store, _relation_key(key), asserter, add=True)
    record.topics |= new_topics
    record.relations |= new_relations
    await store.settings.set(_source_key(asserter), record.to_json())


async def replace_assertions(
    store: ExtractorStore, asserter: str, *, topics: Iterable[str], relations: Iterable[RelKey]
) -> Retraction:
    """Make `asserter` assert exactly these; what it asserted before and no longer does is
    retracted (removed from the graph when nobody else asserts it)."""
    old = await assertions_of(store, asserter)
    new = Assertions(set(topics), set(relations))
    await add_assertions(store, asserter, topics=new.topics, relations=new.relations)
    gone = Assertions(old.topics - new.topics, old.relations - new.relations)
    retraction = await _retract(store, asserter, gone)
    await store.settings.set(_source_key(asserter), new.to_json())
    return retraction


async def retract_all(store: ExtractorStore, asserter: str) -> Retraction:
    """Retract everything `asserter` asserts (its source was deleted)."""
    record = await assertions_of(store, asserter)
    retraction = await _retract(store, asserter, record)
    await store.settings.delete(_source_key(asserter))
    return retraction


async def rename_asserter(store: ExtractorStore, old: str, new: str) -> None:
    """Move a record to a new asserter name (a renamed file with the same content)."""
    record = await assertions_of(store, old)
    await add_assertions(store, new, topics=record.topics, relations=record.relations)
    for topic_id in record.topics:
        await _link(store, _topic_key(topic_id), old, add=False)
    for key in record.relations:
        await _link(store, _relation_key(key), old, add=False)
    await store.settings.delete(_source_key(old))


async def _retract(store: ExtractorStore, asserter: str, gone: Assertions) -> Retraction:
    """Unlink `asserter`; delete what nobody asserts any more (protected topics are flagged)."""
    result = Retraction()
    orphans: list[str] = []
    for topic_id in sorted(gone.topics):
        if not await _link(store, _topic_key(topic_id), asserter, add=False):
            orphans.append(topic_id)
    orphan_relations: list[RelKey] = []
    for key in sorted(gone.relations):
        if not await _link(store, _relation_key(key), asserter, add=False):
            orphan_relations.append(key)
    topics = {t.id: t for t in await store.topics.get_many(orphans)}
    marks = await curation_marks(store, topics)
    flagged: list[Topic] = []
    for topic_id in orphans:
        topic = topics.get(topic_id)
        if topic is None:
            await store.settings.delete(_topic_key(topic_id))
        elif is_protected(topic, marks.get(topic_id, ())):
            meta = topic.metadata.model_dump(exclude_none=True)
            meta["review"] = f"no source asserts it any more (last: {asserter})"
            flagged.append(
                topic.model_copy(update={"metadata": TopicMetadata.model_validate(meta)})
            )
        else:
            result.topics_deleted.append(topic_id)
            await store.settings.delete(_topic_key(topic_id))
    deleted = set(result.topics_deleted)
    relations = [k for k in orphan_relations if k[0] not in deleted and k[1] not in deleted]
    changes = KbChanges(
        topics_upsert=flagged,
        topics_delete=result.topics_deleted,
        relations_delete=[RelationKey(source=s, target=t, type=k) for s, t, k in relations],  # type: ignore[arg-type]
    )
    if not changes.empty:
        await store.apply_kb_changes(changes)
    for key in orphan_relations:
        await store.settings.delete(_relation_key(key))
    result.relations_deleted = orphan_relations
    result.flagged = [t.id for t in flagged]
    if result.topics_deleted or result.flagged:
        log.info("retracted %s: %d topic(s) removed, %d flagged for review", asserter,
                 len(result.topics_deleted), len(result.flagged))  # fmt: skip
    return result
