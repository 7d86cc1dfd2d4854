"""Provenance for graphs from before provenance existed: who asserts each unasserted topic.

A topic or relation nobody asserts is never retracted, so a graph extracted before
provenance would keep a deleted document's topics forever. The backfill gives each such
topic the asserter its metadata names — the upload it came from (`source_id`, when that
source still exists), the handbook file (`handbook:<path>`), or the admins (an approved
suggestion or an admin-made topic) — and each such relation an asserter of both of its ends
(else of its source end). What names no origin is reported and left alone. Running it again
finds nothing more to do.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from services.extractor.handbook import HANDBOOK_SOURCE, asserter_of
from services.extractor.ports import ExtractorStore
from services.extractor.provenance import ADMIN, add_assertions
from shared.store import RelationKey, Topic

_ADMIN_SOURCES = frozenset({"suggestion", "admin"})


@dataclass
class Backfill:
    """What the backfill attributed, and what it could not."""

    topics: int = 0
    relations: int = 0
    by_asserter: dict[str, int] = field(default_factory=dict)
    unattributed_topics: list[str] = field(default_factory=list)
    unattributed_relations: int = 0


def _origin(topic: Topic, sources: set[str]) -> str | None:
    meta = topic.metadata.model_dump(exclude_none=True)
    source_id = meta.get("source_id")
    if isinstance(source_id, str) and source_id in sources:
        return source_id
    path = meta.get("path")
    if meta.get("source") == HANDBOOK_SOURCE and isinstance(path, str) and path:
        return asserter_of(path)
    if meta.get("created_by_admin") or meta.get("source") in _ADMIN_SOURCES:
        return ADMIN
    return None


async def backfill_provenance(store: ExtractorStore) -> Backfill:
    """Record the asserters of unasserted topics and relations (idempotent)."""
    missing = await store.provenance.unasserted()
    topics = await store.topics.get_many(missing.topic_ids)
    named = {str(t.metadata.model_dump().get("source_id") or "") for t in topics} - {""}
    sources = {i for i in named if await store.sources.get(i) is not None}
    report = Backfill()
    topic_rows: dict[str, set[str]] = defaultdict(set)
    for topic in sorted(topics, key=lambda t: t.id):
        asserter = _origin(topic, sources)
        if asserter is None:
            report.unattributed_topics.append(topic.id)
        else:
            topic_rows[asserter].add(topic.id)
    for asserter, ids in sorted(topic_rows.items()):
        await add_assertions(store, asserter, topics=ids, relations=())
    relation_rows = await _relation_asserters(store, missing.relations)
    report.unattributed_relations = len(missing.relations) - sum(map(len, relation_rows.values()))
    for asserter, keys in sorted(relation_rows.items()):
        await add_assertions(store, asserter, topics=(), relations=keys)
    for asserter in {*topic_rows, *relation_rows}:
        report.by_asserter[asserter] = len(topic_rows[asserter]) + len(relation_rows[asserter])
    report.topics = sum(map(len, topic_rows.values()))
    report.relations = sum(map(len, relation_rows.values()))
    return report


async def _relation_asserters(
    store: ExtractorStore, keys: list[RelationKey]
) -> defaultdict[str, set[tuple[str, str, str]]]:
    ends = await store.provenance.sources_of({end for k in keys for end in (k.source, k.target)})
    rows: defaultdict[str, set[tuple[str, str, str]]] = defaultdict(set)
    for key in keys:
        of_source, of_target = ends.get(key.source, []), ends.get(key.target, [])
        both = sorted(set(of_source) & set(of_target))
        chosen = both or of_source
        if chosen:
            rows[chosen[0]].add(key.as_tuple())
    return rows
