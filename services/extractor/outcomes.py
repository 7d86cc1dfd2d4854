"""How a source ends (completed, failed, cancelled), its running counts, and kb.updated."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from services.extractor.ports import ExtractorStore
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


def progress_key(source_id: str) -> str:
    """The settings key holding a source's running counts."""
    return f"extractor.progress.{source_id}"


async def read_progress(store: ExtractorStore, source_id: str) -> dict[str, Any]:
    """A source's running counts (zeros when nothing was merged yet)."""
    value = await store.settings.get(progress_key(source_id))
    counts: dict[str, Any] = {name: 0 for name in _COUNTS}
    counts["changed_ids"] = []
    if isinstance(value, dict):
        counts.update({k: v for k, v in value.items() if k in counts})
    return counts


async def add_progress(
    store: ExtractorStore, source_id: str, *, changed_ids: Iterable[str], **increments: int
) -> dict[str, Any]:
    """Add one merged chunk's counts to the source's running counts (atomically)."""
    changed = list(changed_ids)

    def bump(current: Any) -> dict[str, Any]:
        value = dict(current) if isinstance(current, dict) else {}
        for name in _COUNTS:
            value[name] = int(value.get(name, 0)) + int(increments.get(name, 0))
        ids = list(value.get("changed_ids", []))
        ids.extend(i for i in changed if i not in ids)
        value["changed_ids"] = ids[:MAX_CHANGED_IDS]
        return value

    return await store.settings.update(progress_key(source_id), bump, default={})


def _has_changes(progress: dict[str, Any]) -> bool:
    return bool(progress["changed_ids"] or progress["relations_added"])


async def publish_kb_updated(
    store: ExtractorStore,
    publish: Publish,
    *,
    changed_ids: Iterable[str],
    reason: str,
    key: tuple[str, ...],
    correlation_id: str = "",
) -> KbUpdated:
    """Publish kb.updated with the current KB hash; `key` derives the (dedupable) event id."""
    event = KbUpdated(
        event_id=derived_event_id(KbUpdated.SUBJECT, *key),
        correlation_id=correlation_id,
        actor=ACTOR,
        kb_hash=kb_hash(await store.topics.ids()),
        changed_ids=sorted(set(changed_ids))[:MAX_CHANGED_IDS],
        reason=reason[:500],
    )
    await publish(event)
    return event


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
    total = source.chunks_total
    merged = await store.sources.merged_chunks(source_id)
    if len([i for i in merged if i < total]) < total:
        return False
    moved = False
    if source.status in RUNNING:
        changed = await store.sources.set_status(source_id, "completed", only_from=RUNNING)
        if changed is not None:
            source, moved = changed, True
    if source.status != "completed" or not (moved or republish):
        return moved
    progress = await read_progress(store, source_id)
    started = source.created_at or datetime.now(UTC)
    await publish(
        SourceCompleted(
            event_id=derived_event_id(SourceCompleted.SUBJECT, source_id),
            actor=ACTOR,
            source_id=source_id,
            chunks_done=total,
            chunks_total=total,
            duration=max((datetime.now(UTC) - started).total_seconds(), 0.0),
            **{name: progress[name] for name in _COUNTS},
        )
    )
    if _has_changes(progress):
        await publish_kb_updated(
            store, publish, changed_ids=progress["changed_ids"],
            reason=f"source {source.name} extracted", key=("source", source_id),
        )  # fmt: skip
    if moved:
        log.info("source %s (%s) completed: %s", source_id, source.name,
                 {name: progress[name] for name in _COUNTS})  # fmt: skip
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
    # Chunks merged before the source stopped did change the graph: readers must reload.
    progress = await read_progress(store, source_id)
    if _has_changes(progress):
        await publish_kb_updated(
            store, publish, changed_ids=progress["changed_ids"],
            reason=f"source {source_id} {how} after partial extraction",
            key=("source", source_id, how),
        )  # fmt: skip
