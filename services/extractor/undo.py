"""Bounded bulk changes with a before-image, so every applied plan can be undone.

Before a bulk change (an applied graph analysis, a source deletion) is written, the
current state of every topic and relation it touches is recorded in the store; `undo`
writes that state back. A change deleting more topics than the bound (10 % of the graph,
at least 5 and at most 20) is refused unless the admin raises the bound explicitly.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from services.extractor.ports import ExtractorStore
from shared.errors import BadInputError, NotFoundError
from shared.store import KbChangeResult, KbChanges, Relation, RelationKey, Topic

DEFAULT_BOUND = 20
BOUND_SHARE = 0.10
BOUND_FLOOR = 5  # a small graph can still lose a few duplicates without a raised bound
_LOG = "undo:log"
_KEEP = 50


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
    """Save what `changes` will overwrite or delete; returns the undo id."""
    topic_ids = {t.id for t in changes.topics_upsert} | set(changes.topics_delete)
    before = {t.id: t for t in await store.topics.get_many(topic_ids)}
    relations: dict[tuple[str, str, str], Relation] = {}
    for topic_id in sorted(set(changes.topics_delete)):
        for r in await store.relations.list(topic_id=topic_id):
            relations[(r.source, r.target, r.type)] = r
    touched = {k.as_tuple() for k in changes.relations_delete}
    touched |= {(r.source, r.target, r.type) for r in changes.relations_upsert}
    for source in sorted({k[0] for k in touched}):
        for r in await store.relations.list(topic_id=source):
            if (r.source, r.target, r.type) in touched:
                relations[(r.source, r.target, r.type)] = r
    undo_id = f"undo-{uuid.uuid4().hex[:12]}"
    topics_before = {i: before[i].model_dump(mode="json") if i in before else None
                     for i in sorted(topic_ids)}  # fmt: skip
    image = {
        "reason": reason,
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "topics_before": topics_before,
        "relations_before": [r.model_dump(mode="json") for r in relations.values()],
        "relations_written": sorted("|".join(k) for k in touched - set(relations)),
    }
    await store.settings.set(f"undo:{undo_id}", image)
    await store.settings.update(_LOG, lambda log: [*(log or []), undo_id][-_KEEP:], default=[])
    return undo_id


async def undo_entries(store: ExtractorStore) -> list[UndoEntry]:
    """Recorded bulk changes, newest first."""
    out = []
    for undo_id in reversed(await store.settings.get(_LOG) or []):
        image = await store.settings.get(f"undo:{undo_id}")
        if isinstance(image, dict):
            out.append(UndoEntry(undo_id, str(image.get("reason", "")), str(image.get("at", "")),
                                 len(image.get("topics_before", {})),
                                 len(image.get("relations_before", []))))  # fmt: skip
    return out


async def undo(
    store: ExtractorStore, undo_id: str | None = None
) -> tuple[str, KbChangeResult, list[str]]:
    """Write back a recorded before-image (the newest when no id is given).

    Returns the undo id, the store's result and the topic ids it restored or removed.
    """
    log: list[str] = list(await store.settings.get(_LOG) or [])
    if undo_id is None:
        if not log:
            raise NotFoundError("there is nothing to undo")
        undo_id = log[-1]
    image: Any = await store.settings.get(f"undo:{undo_id}")
    if not isinstance(image, dict):
        raise NotFoundError(f"no recorded change {undo_id!r} (see `r42 graph undo --list`)")
    restore = [Topic.model_validate(t) for t in image["topics_before"].values() if t]
    created = [i for i, t in image["topics_before"].items() if t is None]
    written = []
    for raw in image.get("relations_written", []):
        s, t, k = raw.split("|")
        written.append(RelationKey(source=s, target=t, type=k))
    relations = [Relation.model_validate(r) for r in image["relations_before"]]
    # Restoring topics first: the relations written back need both ends.
    result = await store.apply_kb_changes(KbChanges(
        topics_upsert=restore, topics_delete=created, relations_delete=written,
        relations_upsert=[r for r in relations if r.source not in created
                          and r.target not in created],
    ))  # fmt: skip
    # An upsert never loosens a lock (extraction must not), so undoing a lock unlocks here.
    unlocked = {t.id: t for t in restore if not t.relevance_locked}
    for now in await store.topics.get_many(unlocked):
        if now.relevance_locked:
            before = unlocked[now.id]
            await store.topics.set_relevance(now.id, before.learning_relevance, lock=False)
    await store.settings.delete(f"undo:{undo_id}")
    await store.settings.set(_LOG, [i for i in log if i != undo_id])
    return undo_id, result, sorted({t.id for t in restore} | set(created))
