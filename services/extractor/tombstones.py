"""Tombstones: a topic an admin deleted stays deleted when a source still asserts it.

Deleting a topic (an admin delete, a merge into another, an applied graph analysis) records
who deleted it, when, and the change an undo restores it from.
Extraction (uploads, the handbook sync) drops a tombstoned topic — matched by id or by its
label's kebab id, as a merge matches a re-coined id — with the relations that touch it, and
counts the skip on the tombstone. An admin lifts it with `r42 graph undo` of the delete, or
by re-creating the topic on purpose (a kb import, an approved suggestion).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from services.extractor.ports import ExtractorStore
from shared.kb import to_kebab_id
from shared.store import Tombstone, Topic

log = logging.getLogger(__name__)


async def bury(store: ExtractorStore, topic: Topic, *, by: str, undo_id: str) -> Tombstone:
    """Record that an admin deleted `topic`."""
    return await store.tombstones.add(
        Tombstone(topic_id=topic.id, label=topic.label[:200], deleted_by=by, undo_id=undo_id)
    )


async def lift(store: ExtractorStore, topic_ids: Iterable[str]) -> int:
    """Lift the tombstones of topics an admin restored or re-created; how many there were."""
    return await store.tombstones.remove(topic_ids)


@dataclass(frozen=True)
class Unburied:
    """An extraction result without its tombstoned topics, and which ids were skipped."""

    topics: list[Any]
    relations: list[Any]
    skipped: tuple[str, ...] = ()


def _ids_of(item: Any) -> set[str]:
    ids = {str(getattr(item, "id", ""))}
    try:
        ids.add(to_kebab_id(str(getattr(item, "label", ""))))
    except ValueError:
        pass
    return ids - {""}


async def without_tombstoned(
    store: ExtractorStore, topics: Sequence[Any], relations: Sequence[Any]
) -> Unburied:
    """Drop extracted topics an admin deleted, and the relations touching them."""
    named = {i for t in topics for i in _ids_of(t)}
    named |= {str(getattr(r, end, "")) for r in relations for end in ("source", "target")}
    buried = await store.tombstones.get_many(named)
    if not buried:
        return Unburied(list(topics), list(relations))
    dropped = [t for t in topics if _ids_of(t) & buried.keys()]
    gone = set(buried) | {str(getattr(t, "id", "")) for t in dropped}
    kept = [r for r in relations if not {str(r.source), str(r.target)} & gone]
    skipped = sorted({i for t in dropped for i in _ids_of(t) & buried.keys()})
    return Unburied([t for t in topics if t not in dropped], kept, tuple(skipped))


async def count_skips(store: ExtractorStore, skipped: Iterable[str], *, asserter: str) -> None:
    """Count, on each tombstone, one more extraction that asserted its topic."""
    ids = sorted(set(skipped))
    if ids:
        await store.tombstones.count_skips(ids, asserter=asserter)
        log.info("%s asserts %d deleted topic(s), not brought back: %s", asserter, len(ids),
                 ", ".join(ids[:10]))  # fmt: skip
