"""Bounded bulk changes with a before-image, so every applied plan can be undone.

Before a bulk change (an applied graph analysis, a source deletion) is written, the
current state of every topic and relation it touches is logged in the store's change log;
`undo` writes that state back, once. A change deleting more topics than the bound (10 % of
the graph, at least 5 and at most 20) is refused unless the admin raises the bound
explicitly.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass

from services.extractor.ports import ExtractorStore
from shared.errors import BadInputError, NotFoundError
from shared.store import (
    ChangeBatch,
    KbChangeResult,
    KbChanges,
    Relation,
    RelationKey,
    undo_changes,
    utcnow,
)

DEFAULT_BOUND = 20
BOUND_SHARE = 0.10
BOUND_FLOOR = 5  # a small graph can still lose a few duplicates without a raised bound
ACTOR = "extractor"
_KEEP = 50  # how many recent changes `r42 graph undo --list` shows


def bulk_bound(graph_size: int) -> int:
    """How many topics one bulk change may delete or rewrite without a raised bound."""
    return min(DEFAULT_BOUND, max(BOUND_FLOOR, math.ceil(graph_size * BOUND_SHARE)))


def check_bound(changes: KbChanges, *, graph_size: int, allowed: int | None) -> None:
    """Refuse a change over the bound (BadInputError naming it and how to raise it)."""
    bound = allowed if allowed is not None else bulk_bound(graph_size)
    deleting = len(set(changes.topics_delete))
    if deleting > bound:
        raise BadInputError(
            f"this plan deletes {deleting} of {graph_size} topics; the bound is {bound} "
            "(10 % of the graph, at least 5, at most 20); nothing was applied. Review it, then "
            f"raise the bound explicitly with --max-deletions {deleting} if it is right"
        )


@dataclass(frozen=True)
class UndoEntry:
    """One recorded bulk change."""

    id: str
    reason: str
    at: str
    topics: int
    relations: int


async def record_before_image(store: ExtractorStore, changes: KbChanges, *, reason: str) -> str:
    """Log what `changes` will overwrite or delete in the store's change log; the undo id."""
    topic_ids = {t.id for t in changes.topics_upsert} | set(changes.topics_delete)
    before = {t.id: t for t in await store.topics.get_many(topic_ids)}
    relations: dict[tuple[str, str, str], Relation] = {}
    for r in await store.relations.touching(sorted(set(changes.topics_delete))):
        relations[r.key.as_tuple()] = r
    touched = {k.as_tuple() for k in changes.relations_delete}
    touched |= {r.key.as_tuple() for r in changes.relations_upsert}
    for r in await store.relations.touching(sorted({k[0] for k in touched})):
        if r.key.as_tuple() in touched:
            relations[r.key.as_tuple()] = r
    undo_id = f"undo-{uuid.uuid4().hex[:12]}"
    await store.change_log.record(
        ChangeBatch(
            id=undo_id,
            actor=ACTOR,
            reason=reason,
            created_at=utcnow(),
            topics_before=[before[i] for i in sorted(before)],
            topics_absent=sorted(topic_ids - set(before)),
            relations_before=[relations[k] for k in sorted(relations)],
            relations_absent=[
                RelationKey.model_validate(dict(zip(("source", "target", "type"), k, strict=True)))
                for k in sorted(touched - set(relations))
            ],
        )
    )
    return undo_id


def _entry(batch: ChangeBatch) -> UndoEntry:
    at = batch.created_at.isoformat(timespec="seconds") if batch.created_at else ""
    topics = len(batch.topics_before) + len(batch.topics_absent)
    return UndoEntry(batch.id, batch.reason, at, topics, len(batch.relations_before))


async def undo_entries(store: ExtractorStore) -> list[UndoEntry]:
    """Recorded bulk changes not undone yet, newest first."""
    return [_entry(b) for b in await store.change_log.list(limit=_KEEP) if b.undone_at is None]


async def undo(
    store: ExtractorStore, undo_id: str | None = None, *, by: str = ACTOR
) -> tuple[str, KbChangeResult, list[str]]:
    """Write back a recorded before-image (the newest when no id is given).

    Returns the undo id, the store's result and the topic ids it restored or removed.
    """
    if undo_id is None:
        pending = await undo_entries(store)
        if not pending:
            raise NotFoundError("there is nothing to undo")
        undo_id = pending[0].id
    batch = await store.change_log.get(undo_id)
    if batch is None or batch.undone_at is not None:
        raise NotFoundError(f"no recorded change {undo_id!r} (see `r42 graph undo --list`)")
    result = await store.apply_kb_changes(undo_changes(batch))
    # An upsert never loosens a lock (extraction must not), so undoing a lock unlocks here.
    unlocked = {t.id: t for t in batch.topics_before if not t.relevance_locked}
    for now in await store.topics.get_many(unlocked):
        if now.relevance_locked:
            before = unlocked[now.id]
            await store.topics.set_relevance(now.id, before.learning_relevance, lock=False)
    # A restored topic is no longer deleted: extraction may assert it again.
    await store.tombstones.remove(t.id for t in batch.topics_before)
    await store.change_log.mark_undone(undo_id, by=by)  # after the write: a failure can retry
    return undo_id, result, sorted({t.id for t in batch.topics_before} | set(batch.topics_absent))
