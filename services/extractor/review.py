"""The review hold: an extraction that would rewrite many existing topics waits for an admin.

A merge that would change more existing topics than the bulk bound (10 % of the graph, at
least 5, at most 20) is not applied: its changes and assertions are stored as held, the
sync or chunk goes on, and an admin releases (`r42 graph held --release KEY`, undoable)
or discards it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from services.extractor.outcomes import Publish, publish_kb_updated
from services.extractor.ports import ExtractorStore
from services.extractor.provenance import Assertions, add_assertions
from services.extractor.undo import BOUND_FLOOR, bulk_bound, record_before_image
from shared.errors import NotFoundError
from shared.store import KbChanges

_INDEX = "held:index"


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
    await store.settings.set(f"held:{key}", {
        "asserter": asserter, "reason": reason, "updated_ids": sorted(updated_ids),
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "changes": changes.model_dump(mode="json"), "assertions": asserted.to_json(),
    })  # fmt: skip
    await store.settings.update(_INDEX, lambda keys: sorted({*(keys or []), key}), default=[])
    return True


async def held_changes(store: ExtractorStore) -> list[HeldChange]:
    """Every held extraction, by key."""
    out = []
    for key in await store.settings.get(_INDEX) or []:
        entry = await store.settings.get(f"held:{key}")
        if isinstance(entry, dict):
            out.append(HeldChange(key, str(entry["asserter"]), str(entry["reason"]),
                                  list(entry["updated_ids"]), str(entry["at"])))  # fmt: skip
    return out


async def _take(store: ExtractorStore, key: str) -> dict[str, Any]:
    entry = await store.settings.get(f"held:{key}")
    if not isinstance(entry, dict):
        raise NotFoundError(f"no held change {key!r} (see `r42 graph held`)")
    await store.settings.delete(f"held:{key}")
    await store.settings.update(_INDEX, lambda keys: [k for k in keys or [] if k != key],
                                default=[])  # fmt: skip
    return entry


async def release(store: ExtractorStore, key: str, *, publish: Publish | None) -> str:
    """Apply a held change (an admin approved it); returns the undo id."""
    entry = await _take(store, key)
    changes = KbChanges.model_validate(entry["changes"])
    undo_id = await record_before_image(store, changes, reason=f"release held {key}")
    await store.apply_kb_changes(changes)
    asserted = Assertions.from_json(entry["assertions"])
    await add_assertions(store, str(entry["asserter"]), topics=asserted.topics,
                         relations=asserted.relations)  # fmt: skip
    if publish is not None:
        await publish_kb_updated(
            store, publish, changed_ids=[t.id for t in changes.topics_upsert],
            reason=f"held change {key} released", key=("release", key, uuid.uuid4().hex),
        )  # fmt: skip
    return undo_id


async def discard(store: ExtractorStore, key: str) -> None:
    """Drop a held change without applying it."""
    await _take(store, key)
