"""The review hold: an extraction that would rewrite many existing topics waits for an admin.

A merge that would change more existing topics than the bulk bound (10 % of the graph, at
least 5, at most 20) is not applied: its changes and assertions are stored as held, the
sync or chunk goes on, and an admin releases (`r42 graph held --release KEY`, undoable)
or discards it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from services.extractor.outcomes import Publish, publish_kb_updated
from services.extractor.ports import ExtractorStore
from services.extractor.provenance import Assertions, add_assertions, relation_key
from services.extractor.undo import BOUND_FLOOR, bulk_bound, record_before_image
from shared.errors import NotFoundError
from shared.store import HeldChange as HeldRecord
from shared.store import KbChanges


@dataclass(frozen=True)
class HeldChange:
    """One extraction waiting for review."""

    key: str
    asserter: str
    reason: str
    updated_ids: list[str]
    at: str


async def hold_if_over_bound(
    store: ExtractorStore, *, key: str, asserter: str, updated_ids: list[str], changes: KbChanges,
    asserted: Assertions, reason: str,
) -> bool:  # fmt: skip
    """Store the change as held (True) when it rewrites more existing topics than the bound."""
    if len(updated_ids) <= BOUND_FLOOR:  # under every bound: no count needed
        return False
    size = (await store.topics.counts()).total
    if len(updated_ids) <= bulk_bound(size):
        return False
    await store.held_changes.put(HeldRecord(
        key=key, asserter=asserter, reason=reason, updated_ids=sorted(updated_ids),
        changes=changes, topics=sorted(asserted.topics),
        relations=[relation_key(k) for k in sorted(asserted.relations)],
    ))  # fmt: skip
    return True


async def held_changes(store: ExtractorStore) -> list[HeldChange]:
    """Every held extraction, by key."""
    return [
        HeldChange(h.key, h.asserter, h.reason, h.updated_ids,
                   h.created_at.isoformat(timespec="seconds") if h.created_at else "")
        for h in await store.held_changes.list()
    ]  # fmt: skip


async def _take(store: ExtractorStore, key: str) -> HeldRecord:
    held = await store.held_changes.take(key)
    if held is None:
        raise NotFoundError(f"no held change {key!r} (see `r42 graph held`)")
    return held


async def release(store: ExtractorStore, key: str, *, publish: Publish | None) -> str:
    """Apply a held change (an admin approved it); returns the undo id."""
    held = await _take(store, key)
    undo_id = await record_before_image(store, held.changes, reason=f"release held {key}")
    await store.apply_kb_changes(held.changes)
    await add_assertions(store, held.asserter, topics=held.topics,
                         relations=[k.as_tuple() for k in held.relations])  # fmt: skip
    if publish is not None:
        await publish_kb_updated(
            store, publish, changed_ids=[t.id for t in held.changes.topics_upsert],
            reason=f"held change {key} released", key=("release", key, uuid.uuid4().hex),
        )  # fmt: skip
    return undo_id


async def discard(store: ExtractorStore, key: str) -> None:
    """Drop a held change without applying it."""
    await _take(store, key)
