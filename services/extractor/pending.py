"""Relations waiting for an endpoint topic: kept per source, applied when the topic arrives.

A chunk may name a topic that a later chunk (or another source) introduces. Instead of
dropping such a relation, the merge keeps it pending; every later merge that adds topics
applies the pending relations whose endpoints now both exist. When a source completes,
what is still pending is dropped and counted (`relations_dropped`), with the reason logged.
A handbook file's pending relations stay until that file's next version (or deletion): the
topic may come from a file synced later. Their bounds (at most MAX_PER_FILE per file; dropped
after waiting pending_bounds.MAX_WAIT past a complete sync) are in pending_bounds.py.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence

from services.extractor.outcomes import add_progress
from services.extractor.ports import ExtractorStore
from services.extractor.provenance import add_assertions
from shared.errors import BadInputError, TransientError
from shared.kb import MergePlan
from shared.store import KbChanges, PendingRelation, Relation, utcnow

log = logging.getLogger(__name__)

HANDBOOK_PREFIX = "handbook:"
"""Asserters of handbook files (`handbook:<path>`): pending per file, until its next version."""
MAX_PER_FILE = 100
"""Pending relations one handbook file may keep; beyond it the file's extra ones are dropped."""
_SHOWN = 5


def missing_ends(pending: PendingRelation, present: set[str]) -> list[str]:
    """The endpoints of a pending relation that are not topics (yet)."""
    ends = (pending.relation.source, pending.relation.target)
    return [end for end in dict.fromkeys(ends) if end not in present]


def file_of(source_id: str) -> str:
    """The handbook file (or source id) that asserted a pending relation."""
    return source_id.removeprefix(HANDBOOK_PREFIX)


def describe(rows: Sequence[PendingRelation], present: set[str] | None = None) -> str:
    """A few pending relations as `a → b (file)`, with `…` when there are more."""
    shown = []
    for p in rows[:_SHOWN]:
        missing = missing_ends(p, present) if present is not None else []
        wants = f", no topic {', '.join(missing)}" if missing else ""
        shown.append(f"{p.relation.source} → {p.relation.target} ({file_of(p.source_id)}{wants})")
    return "; ".join(shown) + (" …" if len(rows) > _SHOWN else "")


def carry_over(
    new: Iterable[PendingRelation], old: Iterable[PendingRelation]
) -> list[PendingRelation]:
    """A file's new pending relations, keeping the age of those its last version had too.

    At most MAX_PER_FILE are kept (the longest waiting first); the rest are logged as dropped.
    """
    since = {p.identity: p.added_at for p in old}
    rows = [p.model_copy(update={"added_at": since.get(p.identity) or p.added_at}) for p in new]
    rows.sort(key=lambda p: (p.added_at is None, p.added_at or utcnow(), p.identity))
    kept, dropped = rows[:MAX_PER_FILE], rows[MAX_PER_FILE:]
    if dropped:
        log.warning("%s asserts %d relations to missing topics; kept %d, dropped %s",
                    file_of(dropped[0].source_id), len(rows), MAX_PER_FILE,
                    describe(dropped))  # fmt: skip
    return kept


def pending_of_plan(plan: MergePlan, *, source_id: str, chunk_index: int) -> list[PendingRelation]:
    """The plan's relations to topics not there yet, as pending rows of this chunk."""
    return [
        PendingRelation(
            source_id=source_id, chunk_index=chunk_index,
            relation=Relation(source=r.source, target=r.target, type=r.type,  # type: ignore[arg-type]
                              description=r.description or None),
        )
        for r in plan.pending
    ]  # fmt: skip


async def keep_file_pending(store: ExtractorStore, plan: MergePlan, *, asserter: str) -> int:
    """A handbook file's relations to topics not synced yet replace its last version's.

    Applied when the topic arrives (resolve_pending), so the graph does not depend on the
    order files sync in; returns how many wait.
    """
    before = await store.pending_merges.relations_of(asserter)
    rows = carry_over(pending_of_plan(plan, source_id=asserter, chunk_index=0), before)
    await store.pending_merges.clear(asserter)
    return await store.pending_merges.add_relations(rows)


async def move_pending(store: ExtractorStore, old: str, new: str) -> int:
    """A renamed file's pending relations go with it (same content, new asserter name)."""
    waiting = await store.pending_merges.relations_of(old)
    if not waiting:
        return 0
    moved = [p.model_copy(update={"source_id": new}) for p in waiting]
    await store.pending_merges.add_relations(moved)  # first: a crash in between loses none
    await store.pending_merges.clear(old)
    return len(moved)


async def resolve_pending(store: ExtractorStore, topic_ids: Iterable[str]) -> int:
    """Apply the pending relations (of any source) that these new topics complete.

    Idempotent: the upsert, the assertions and the removal may each be repeated after a crash.
    """
    ids = set(topic_ids)
    if not ids:
        return 0
    waiting = await store.pending_merges.relations_touching(ids)
    if not waiting:
        return 0
    ends = {end for p in waiting for end in (p.relation.source, p.relation.target)}
    present = {t.id for t in await store.topics.get_many(ends)}
    ready = [p for p in waiting if p.relation.source in present and p.relation.target in present]
    if not ready:
        return 0
    unique = {p.relation.key.as_tuple(): p.relation for p in ready}
    try:
        await store.apply_kb_changes(KbChanges(relations_upsert=list(unique.values())))
    except BadInputError as exc:  # an endpoint was deleted in between: try on redelivery
        raise TransientError(f"applying pending relations: {exc}") from exc
    by_source: dict[str, set[tuple[str, str, str]]] = defaultdict(set)
    for p in ready:
        by_source[p.source_id].add(p.relation.key.as_tuple())
    for source_id, keys in sorted(by_source.items()):
        await add_assertions(store, source_id, topics=(), relations=keys)
    removed = await store.pending_merges.remove_relations(ready)
    if removed:
        for source_id, keys in sorted(by_source.items()):
            if not source_id.startswith(HANDBOOK_PREFIX):  # a file has no progress counts
                await add_progress(store, source_id, changed_ids=(), relations_added=len(keys))
        log.info("applied %d pending relation(s) whose endpoint arrived", removed)
    return removed


async def settle_pending(store: ExtractorStore, source_id: str) -> int:
    """At a source's completion: apply what can be, drop (and count) the rest; returns dropped."""
    left = await store.pending_merges.relations_of(source_id)
    if left:
        await resolve_pending(store, {p.relation.source for p in left} |
                              {p.relation.target for p in left})  # fmt: skip
        left = await store.pending_merges.relations_of(source_id)
    # The count comes from the delete itself, so two racing completions count once.
    _, dropped = await store.pending_merges.clear(source_id)
    if dropped:
        await add_progress(store, source_id, changed_ids=(), relations_dropped=dropped)
        shown = ", ".join(f"{p.relation.source}→{p.relation.target}" for p in left[:5])
        log.info("source %s completed; %d relation(s) dropped: no topic for an endpoint (%s%s)",
                 source_id, dropped, shown, " …" if len(left) > 5 else "")  # fmt: skip
    return dropped
