"""Admin lifecycle actions: delete a source (retracting what it asserted), undo a bulk change."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from services.extractor.curation import curation_marks, is_protected
from services.extractor.outcomes import Publish, publish_kb_updated
from services.extractor.ports import ExtractorStore
from services.extractor.provenance import assertions_of, forget_source, relation_key
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
    going = KbChanges(topics_delete=(await preview_delete(store, source_id)).removed)
    check_bound(going, graph_size=(await store.topics.counts()).total, allowed=max_deletions)
    # The before-image takes all it asserts, so an undo also restores its orphaned relations.
    relations = [relation_key(k) for k in sorted(record.relations)]
    touched = KbChanges(topics_delete=sorted(record.topics), relations_delete=relations)
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


@dataclass
class DeletePreview:
    """What deleting one source takes from the graph."""

    removed: list[str] = field(default_factory=list)
    flagged: list[str] = field(default_factory=list)
    relations: int = 0


async def preview_delete(store: ExtractorStore, source_id: str) -> DeletePreview:
    """The topics only `source_id` asserts (removed, or flagged when curated) and the relations
    that go with them; reads only what the source asserts, never the whole graph."""
    record = await assertions_of(store, source_id)
    asserters = await store.provenance.sources_of(sorted(record.topics))
    only = sorted(t for t in record.topics if asserters.get(t, [source_id]) == [source_id])
    topics = {t.id: t for t in await store.topics.get_many(only)}
    marks = await curation_marks(store, topics)
    preview = DeletePreview()
    for topic_id in only:
        topic = topics.get(topic_id)
        if topic is None:
            continue
        kept = is_protected(topic, marks.get(topic_id, ()))
        (preview.flagged if kept else preview.removed).append(topic_id)
    keys = [relation_key(k) for k in sorted(record.relations)]
    by_key = await store.provenance.sources_of_relations(keys)
    going = {k for k in record.relations if by_key.get(k, [source_id]) == [source_id]}
    going |= {r.key.as_tuple() for r in await store.relations.touching(preview.removed)}
    preview.relations = len(going)
    return preview


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
