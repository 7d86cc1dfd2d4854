"""Admin lifecycle actions: delete a source (retracting what it asserted), undo a bulk change."""

from __future__ import annotations

import uuid

from services.extractor.outcomes import Publish, publish_kb_updated
from services.extractor.ports import ExtractorStore
from services.extractor.provenance import assertions_of, forget_source
from services.extractor.undo import check_bound, record_before_image, undo
from shared.errors import BadInputError
from shared.store import KbChanges


async def delete_source(
    *,
    store: ExtractorStore,
    source_id: str,
    publish: Publish | None,
    max_deletions: int | None = None,
) -> tuple[list[str], str | None]:
    """Delete a source and retract its contributions; returns (removed ids, undo id).

    What only this source asserted leaves the graph (an admin's curated topics stay,
    flagged for review); the before-image is recorded so `r42 graph undo` restores it.
    """
    source = await store.sources.get(source_id)
    if source is None:
        raise BadInputError(f"no source {source_id!r} (see `r42 sources`)")
    if source.status in ("pending", "processing"):
        raise BadInputError(f"source {source_id} is still {source.status}; cancel it first")
    record = await assertions_of(store, source_id)
    touched = KbChanges(topics_delete=sorted(record.topics))
    check_bound(touched, graph_size=len(await store.topics.ids()), allowed=max_deletions)
    undo_id = await record_before_image(store, touched, reason=f"delete source {source.name}")
    retraction = await forget_source(store, name=source.name, source_id=source_id)
    await store.sources.delete(source_id)
    await store.source_texts.delete(source_id)
    await store.pending_merges.clear(source_id)  # nothing it asserted may land later
    if publish is not None and (retraction.removed_ids or retraction.flagged):
        await publish_kb_updated(
            store, publish, changed_ids=retraction.flagged, removed_ids=retraction.removed_ids,
            reason=f"source {source.name} deleted", key=("delete", source_id),
        )  # fmt: skip
    return retraction.removed_ids, undo_id


async def undo_change(
    *, store: ExtractorStore, undo_id: str | None, publish: Publish | None
) -> tuple[str, list[str]]:
    """Restore a recorded before-image; returns (undo id, the topic ids it touched)."""
    done, _, touched = await undo(store, undo_id)
    if publish is not None and touched:
        await publish_kb_updated(
            store, publish, changed_ids=touched, reason=f"undo {done}",
            key=("undo", done, uuid.uuid4().hex),
        )  # fmt: skip
    return done, touched
