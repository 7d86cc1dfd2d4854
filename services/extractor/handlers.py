"""Thin subscribers: parse the event, call the service function, publish through deps."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

from services.extractor.admins import is_graph_admin
from services.extractor.cancel import SourceTasks
from services.extractor.config import ExtractOptions, ExtractorSettings
from services.extractor.deltas import decide_suggestion
from services.extractor.merge import merge_chunk
from services.extractor.objects import SourceObjects
from services.extractor.outcomes import ACTOR, Publish, fail_source, in_flow, mark_cancelled
from services.extractor.ports import ExtractorStore
from services.extractor.runner import run_source
from services.extractor.uploads import decode_upload, sha256_text
from shared.bus import (
    ChunkExtracted,
    KbDeltaApplied,
    KbDeltaDecided,
    KbDeltaProposed,
    SourceCancelled,
    SourceFailed,
    SourceUploaded,
    current_delivery,
    derived_event_id,
)
from shared.config import Settings
from shared.errors import BadInputError
from shared.llm import Limiter
from shared.store import Source

log = logging.getLogger(__name__)


@dataclass
class ExtractorDeps:
    """What the handlers share; the bench swaps `limiter` on a running service."""

    store: ExtractorStore
    publish: Publish
    limiter: Limiter | None
    settings: Settings
    extractor: ExtractorSettings
    tasks: SourceTasks
    objects: SourceObjects | None = None

    @property
    def options(self) -> ExtractOptions:
        """Chunking and model options from the extractor settings."""
        return self.extractor.options

    def is_admin(self, user_id: str) -> bool:
        """Whether a user may decide suggestions (the owner's own rule; never a request field)."""
        return is_graph_admin(user_id, self.settings)


async def ensure_source(
    store: ExtractorStore, event: SourceUploaded, *, objects: SourceObjects | None = None,
    max_bytes: int = 10 * 1024 * 1024,
) -> None:  # fmt: skip
    """Register the source from its object in r42-sources unless it is registered already.

    `text_ref` names the uploaded file (docs/asyncapi.yaml); its size and sha256 must match
    the event. The text is kept with the source (identified by the text's own sha256, as
    every entry point does) and the object deleted. A source registered before this event
    (rpc.extractor.register_upload, a resumed ingest, a redelivery) is not read again.
    """
    if await store.sources.get(event.source_id) is not None:
        if objects is not None:
            # A resumed ingest puts its file again; a newer file under that name stays.
            await objects.drop(event.text_ref, sha256=event.sha256)
        return
    data = await objects.read(event.text_ref) if objects is not None else None
    if data is None:
        raise BadInputError(
            f"source {event.source_id}: no object {event.text_ref!r} in the r42-sources "
            "bucket (put the file there first; text_ref is its object name)"
        )
    if len(data) != event.size or hashlib.sha256(data).hexdigest() != event.sha256:
        raise BadInputError(
            f"source {event.source_id}: object {event.text_ref!r} does not match the "
            f"event's size and sha256 ({len(data)} bytes received, {event.size} announced)"
        )
    text = decode_upload(data, name=event.name, max_bytes=max_bytes)
    # Text first: a source row never points at missing text.
    await store.source_texts.put(event.source_id, text)
    await store.sources.create(
        Source(id=event.source_id, name=event.name, sha256=sha256_text(text),
               who=event.uploaded_by)
    )  # fmt: skip
    if objects is not None:
        await objects.drop(event.text_ref, sha256=event.sha256)


def source_failed(event: SourceUploaded | SourceCancelled, error: str) -> SourceFailed:
    """The extractor's own report of a source input it gave up on (deduped per source)."""
    return SourceFailed.caused_by(
        event, actor=ACTOR, event_id=derived_event_id(SourceFailed.SUBJECT, event.source_id),
        source_id=event.source_id, error=error,
    )  # fmt: skip


async def on_source_uploaded(deps: ExtractorDeps, event: SourceUploaded) -> None:
    """source.uploaded → extract every unmerged chunk (redelivery resumes a crashed run)."""
    delivery = current_delivery()
    last = delivery.last if delivery is not None else True
    publish = in_flow(deps.publish, event.correlation_id)
    try:
        await ensure_source(deps.store, event, objects=deps.objects,
                            max_bytes=deps.settings.max_upload_bytes)  # fmt: skip
    except BadInputError as exc:
        await fail_source(deps.store, event.source_id, str(exc), publish)
        return
    result = await run_source(
        store=deps.store, source_id=event.source_id, publish=publish,
        limiter=deps.limiter, options=deps.options, tasks=deps.tasks, last_attempt=last,
        correlation_id=event.correlation_id,
    )  # fmt: skip
    log.info("source %s: LLM step done, %d chunk(s) extracted (source %s)",
             event.source_id, result.chunks_extracted, result.status)  # fmt: skip


async def on_source_cancelled(deps: ExtractorDeps, event: SourceCancelled) -> None:
    """source.cancelled → record the status; the task here (if any) stops at once."""
    deps.tasks.cancel(event.source_id)
    publish = in_flow(deps.publish, event.correlation_id)
    if not await mark_cancelled(deps.store, event.source_id, publish):
        source = await deps.store.sources.get(event.source_id)
        state = source.status if source else "unknown"
        log.info("cancel of source %s ignored: it is %s", event.source_id, state)


async def on_chunk_extracted(deps: ExtractorDeps, event: ChunkExtracted) -> None:
    """chunk.extracted → merge it (once; a redelivery is a no-op)."""
    await merge_chunk(
        store=deps.store, event=event, publish=in_flow(deps.publish, event.correlation_id)
    )


async def on_delta_decided(deps: ExtractorDeps, event: KbDeltaDecided) -> None:
    """kb.delta.decided → apply an approved delta or record a rejection (idempotent)."""
    outcome, topics, relations = await decide_suggestion(
        store=deps.store,
        event=event,
        publish=in_flow(deps.publish, event.correlation_id),
        is_admin=deps.is_admin,
    )
    log.info("suggestion %s: %s", event.suggestion_id, outcome)
    if outcome == "already_decided":
        return  # the first decision already reported its outcome
    suggestion = await deps.store.suggestions.get(event.suggestion_id)
    await deps.publish(
        KbDeltaApplied.caused_by(
            event, actor=ACTOR, suggestion_id=event.suggestion_id, decision=event.decision,
            decided_by=event.decided_by, outcome=outcome, topics=topics, relations=relations,
            proposed_by=suggestion.proposed_by if suggestion else "",
            event_id=derived_event_id(KbDeltaApplied.SUBJECT, event.suggestion_id),
        )
    )  # fmt: skip


def delta_failed(event: KbDeltaDecided, error: str) -> KbDeltaApplied:
    """The owner's report of a decision it could not apply (the suggestion stays pending)."""
    return KbDeltaApplied.caused_by(
        event, actor=ACTOR, suggestion_id=event.suggestion_id, decision=event.decision,
        decided_by=event.decided_by, outcome="failed", error=error[:4000] or "unknown error",
        event_id=derived_event_id(KbDeltaApplied.SUBJECT, event.event_id, "failed"),
    )  # fmt: skip


async def on_delta_proposed(deps: ExtractorDeps, event: KbDeltaProposed) -> None:
    """kb.delta.proposed → logged only (the r42 service stores the pending suggestion)."""
    del deps
    log.info("suggestion %s proposed by %s: %d topic(s), %d relation(s)",
             event.suggestion_id, event.proposed_by, len(event.delta.topics),
             len(event.delta.relations))  # fmt: skip
