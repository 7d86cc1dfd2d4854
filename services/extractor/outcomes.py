"""How a source ends (completed, failed, cancelled), its running counts, and kb.updated."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from services.extractor.ports import ExtractorStore
from services.extractor.provenance import retract_all, supersede
from shared.bus import (
    Event,
    KbUpdated,
    SourceCompleted,
    SourceFailed,
    SourceProgress,
    derived_event_id,
)
from shared.errors import NotFoundError
from shared.kb import kb_hash
from shared.store import Source, SourceStatus

log = logging.getLogger(__name__)

ACTOR = "extractor"
Publish = Callable[[Event], Awaitable[Any]]

RUNNING: frozenset[SourceStatus] = frozenset({"pending", "processing"})
MAX_CHANGED_IDS = 500
_COUNTS = ("topics_added", "topics_updated", "relations_added", "relations_dropped")


async def read_progress(store: ExtractorStore, source_id: str) -> dict[str, Any]:
    """A source's running counts (zeros when nothing was merged yet)."""
    progress = await store.merge_progress.get(source_id)
    return progress.model_dump(include={*_COUNTS, "changed_ids"})


async def add_progress(
    store: ExtractorStore, source_id: str, *, changed_ids: Iterable[str], **increments: int
) -> dict[str, Any]:
    """Add one merged chunk's counts to the source's running counts (atomically)."""
    progress = await store.merge_progress.add(
        source_id,
        changed_ids=changed_ids,
        max_changed_ids=MAX_CHANGED_IDS,
        **{name: int(increments.get(name, 0)) for name in _COUNTS},
    )
    return progress.model_dump(include={*_COUNTS, "changed_ids"})


def _has_changes(progress: dict[str, Any]) -> bool:
    return bool(progress["changed_ids"] or progress["relations_added"])


def in_flow(publish: Publish, correlation_id: str) -> Publish:
    """`publish`, stamping every event with the correlation id of the flow being handled."""

    async def stamped(event: Event) -> Any:
        if correlation_id and event.correlation_id != correlation_id:
            event = event.model_copy(update={"correlation_id": correlation_id})
        return await publish(event)

    return stamped


async def publish_kb_updated(
    store: ExtractorStore,
    publish: Publish,
    *,
    changed_ids: Iterable[str],
    reason: str,
    key: tuple[str, ...],
    correlation_id: str = "",
    removed_ids: Iterable[str] = (),
) -> KbUpdated:
    """Publish kb.updated with the KB version hash; `key` derives the (dedupable) event id."""
    changed, removed = sorted(set(changed_ids)), sorted(set(removed_ids))
    event = KbUpdated(
        event_id=derived_event_id(KbUpdated.SUBJECT, *key),
        correlation_id=correlation_id,
        actor=ACTOR,
        kb_hash=await _next_kb_hash(store, changed, removed),
        changed_ids=changed[:MAX_CHANGED_IDS],
        removed_ids=removed[:MAX_CHANGED_IDS],
        reason=reason[:500],
    )
    await publish(event)
    return event


async def _next_kb_hash(store: ExtractorStore, changed: list[str], removed: list[str]) -> str:
    """A version hash chained from the previous one and this change: O(change), not O(graph).

    The first event hashes the whole id list once (kb_hash); later ones chain on it, so
    readers still see a new hash for every change without the writer re-reading the graph.
    """
    step = "\n".join(["+", *changed, "-", *removed])

    def advance(previous: str) -> str:
        return hashlib.sha256(f"{previous}\n{step}".encode()).hexdigest()[:8]

    initial = None
    if await store.kb_version.get() is None:
        initial = kb_hash(await store.topics.ids())
    return await store.kb_version.advance(advance, initial=initial)


def progress_event(source: Source, progress: dict[str, Any], *, chunk_index: int) -> SourceProgress:
    """source.progress after one merged chunk (its id dedupes redeliveries)."""
    total = source.chunks_total or 0
    return SourceProgress(
        event_id=derived_event_id(SourceProgress.SUBJECT, source.id, str(chunk_index)),
        actor=ACTOR,
        source_id=source.id,
        chunks_done=min(source.chunks_done, total),
        chunks_total=total,
        **{name: progress[name] for name in _COUNTS},
    )


async def finish_if_done(
    store: ExtractorStore, source_id: str, publish: Publish, *, republish: bool = False
) -> bool:
    """Complete the source once every chunk is merged; True when this call completed it.

    `republish` sends the completion again for a source that is already completed (a
    redelivered merge after a crash between the status change and the publish).
    """
    source = await store.sources.get(source_id)
    if source is None or source.chunks_total is None:
        return False
    merged = await store.sources.merged_chunks(source_id)
    if len([i for i in merged if i < source.chunks_total]) < source.chunks_total:
        return False
    moved = False
    if source.status in RUNNING:
        changed = await store.sources.set_status(source_id, "completed", only_from=RUNNING)
        if changed is not None:
            source, moved = changed, True
    if source.status != "completed" or not (moved or republish):
        return moved
    progress = await read_progress(store, source_id)
    # This version of the document replaces the previous one: what only that one said goes.
    retraction = await supersede(store, name=source.name, source_id=source_id)
    started = source.created_at or datetime.now(UTC)
    await publish(
        SourceCompleted(
            event_id=derived_event_id(SourceCompleted.SUBJECT, source_id),
            actor=ACTOR,
            source_id=source_id,
            chunks_done=source.chunks_total or 0,
            chunks_total=source.chunks_total or 0,
            duration=max((datetime.now(UTC) - started).total_seconds(), 0.0),
            **{name: progress[name] for name in _COUNTS},
        )
    )
    if _has_changes(progress) or retraction.removed_ids:
        await publish_kb_updated(
            store,
            publish,
            changed_ids=progress["changed_ids"],
            removed_ids=retraction.removed_ids,
            reason=f"source {source.name} extracted",
            key=("source", source_id),
        )
    if moved:
        log.info(
            "source %s (%s) completed: %s",
            source_id,
            source.name,
            {name: progress[name] for name in _COUNTS},
        )
    return moved


async def fail_source(store: ExtractorStore, source_id: str, reason: str, publish: Publish) -> None:
    """Mark the source failed with the reason and publish source.failed (once per source)."""
    reason = reason.strip()[:4000] or "extraction failed"
    try:
        moved = await store.sources.set_status(source_id, "failed", error=reason, only_from=RUNNING)
    except NotFoundError:
        moved = None
    else:
        if moved is None:
            log.info("source %s already ended; not marking it failed (%s)", source_id, reason)
            return
    log.warning("source %s failed: %s", source_id, reason)
    await publish(
        SourceFailed(
            event_id=derived_event_id(SourceFailed.SUBJECT, source_id),
            actor=ACTOR,
            source_id=source_id,
            error=reason,
        )
    )
    await _kb_updated_for_partial(store, source_id, publish, "failed")


async def mark_cancelled(store: ExtractorStore, source_id: str, publish: Publish) -> bool:
    """Record that a source was cancelled; True when it was still running."""
    try:
        moved = await store.sources.set_status(source_id, "cancelled", only_from=RUNNING)
    except NotFoundError:
        return False
    if moved is not None:
        log.info("source %s cancelled", source_id)
        await _kb_updated_for_partial(store, source_id, publish, "cancelled")
    return moved is not None


async def _kb_updated_for_partial(
    store: ExtractorStore, source_id: str, publish: Publish, how: str
) -> None:
    # A source that did not finish leaves no partial topics: what only it asserted goes,
    # and so do its held results and pending relations (no later topic may apply them).
    retraction = await retract_all(store, source_id)
    await store.pending_merges.clear(source_id)
    progress = await read_progress(store, source_id)
    if _has_changes(progress) or retraction.removed_ids:
        await publish_kb_updated(
            store,
            publish,
            changed_ids=progress["changed_ids"],
            removed_ids=retraction.removed_ids,
            reason=f"source {source_id} {how} after partial extraction",
            key=("source", source_id, how),
        )
