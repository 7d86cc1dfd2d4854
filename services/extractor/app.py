"""Wiring of the extractor service (the KG owner): subscribers, cancels, sync rpc, sample.

Crash safety: a source.uploaded message is acknowledged only when its LLM step has ended.
While it works, shared.bus's consumer sends in-progress signals every ack_wait/3, so a
long source is never redelivered to another worker; when the process dies (even SIGKILL)
the signals stop and JetStream redelivers the message after ack_wait
(R42_EXTRACTOR_ACK_WAIT_S). The new run skips every chunk with a merge mark and resumes at
the first unmerged one; chunk.extracted messages still in flight are merged once each
(the mark is written in the same transaction as the chunk's graph changes).
"""

from __future__ import annotations

import asyncio
import logging
import sys
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

from pydantic import ValidationError

from services.extractor import handlers
from services.extractor.cancel import SourceTasks
from services.extractor.config import ExtractorSettings, build_extractor_settings
from services.extractor.graph_rpc import answer_analyze, answer_apply, answer_undo
from services.extractor.handlers import ExtractorDeps, delta_failed, source_failed
from services.extractor.kb_import import answer_import
from services.extractor.objects import SourceObjects
from services.extractor.offline import offline_plans
from services.extractor.outcomes import ACTOR
from services.extractor.source_delete import source_rpcs
from services.extractor.sync_rpc import answer_sync
from services.extractor.topic_rpc import topic_rpcs
from services.extractor.uploads import (
    read_upload,
    register_staged,
    register_upload,
    sha256_text,
)
from shared.bus import (
    ChunkExtracted,
    KbDeltaDecided,
    KbDeltaProposed,
    SourceCancelled,
    SourceUploaded,
)
from shared.bus.extractor_rpc import (
    KB_IMPORT_SUBJECT,
    REGISTER_UPLOAD_SUBJECT,
    SYNC_HANDBOOK_SUBJECT,
    HandbookSyncReply,
    HandbookSyncRequest,
    KbImportReply,
    KbImportRequest,
    RegisterUploadReply,
    RegisterUploadRequest,
)
from shared.bus.graph_rpc import (
    GRAPH_ANALYZE_SUBJECT,
    GRAPH_APPLY_SUBJECT,
    GRAPH_UNDO_SUBJECT,
    GraphAnalyzeRequest,
    GraphApplyReply,
    GraphApplyRequest,
    GraphPlanReply,
    GraphUndoReply,
    GraphUndoRequest,
)
from shared.errors import R42Error
from shared.runtime.service import (
    Broadcast,
    Rpc,
    ServiceContext,
    ServiceSpec,
    Subscription,
    service_main,
)
from shared.store import describe_validation

log = logging.getLogger(__name__)

NAME = "extractor"
SAMPLE_FLAG = "extractor.sample_handbook"
SAMPLE_PREFIX = "sample-"


def sample_handbook_dir() -> Path:
    """The bundled sample handbook (Dutch markdown files)."""
    return Path(__file__).resolve().parent / "sample_handbook"


def deps_of(ctx: ServiceContext) -> ExtractorDeps:
    """The extractor's handler dependencies on a running service."""
    deps = ctx.spec.deps if ctx.spec is not None else None
    if not isinstance(deps, ExtractorDeps):
        raise R42Error("the extractor is not running on this service context")
    return deps


def build(
    ctx: ServiceContext, *, extractor: ExtractorSettings | None = None
) -> ServiceSpec[ExtractorDeps]:
    """The KG owner's consumers, the cancel broadcast, sync and import rpcs, the sample."""
    ext = extractor or build_extractor_settings()
    deps = ExtractorDeps(store=ctx.store, publish=ctx.publish, limiter=ctx.limiter,
                         settings=ctx.settings, extractor=ext, tasks=SourceTasks())  # fmt: skip

    # Uploaded files in the r42-sources bucket (text_ref = the object's name).
    deps.objects = SourceObjects(ctx.broker, ctx.settings.max_upload_bytes)
    sub = partial(Subscription, max_deliver=ext.max_deliver, ack_wait=ext.ack_wait_s)
    sync_lock = asyncio.Lock()

    async def on_sync(request: HandbookSyncRequest) -> HandbookSyncReply:
        return await answer_sync(request, deps=deps, lock=sync_lock)

    analyze_lock = asyncio.Lock()

    async def on_analyze(request: GraphAnalyzeRequest) -> GraphPlanReply:
        return await answer_analyze(request, deps=deps, lock=analyze_lock)

    async def on_apply(request: GraphApplyRequest) -> GraphApplyReply:
        return await answer_apply(request, deps=deps)

    async def on_undo(request: GraphUndoRequest) -> GraphUndoReply:
        return await answer_undo(request, deps=deps)

    async def on_import(request: KbImportRequest) -> KbImportReply:
        return await answer_import(request, store=deps.store, publish=deps.publish)

    async def on_register(request: RegisterUploadRequest) -> RegisterUploadReply:
        return await register_staged(deps.store, request, objects=deps.objects,
                                     max_bytes=ctx.settings.max_upload_bytes,
                                     publish=deps.publish)  # fmt: skip

    async def on_cancel_broadcast(event: SourceCancelled) -> None:
        deps.tasks.cancel(event.source_id)  # the worker running it may be this replica

    async def sample() -> None:
        await ingest_sample_handbook_if_first_start(deps)

    subscriptions = [
        sub(SourceUploaded, "extractor-sources", partial(handlers.on_source_uploaded, deps),
            max_workers=ext.source_workers, on_failure=source_failed),
        sub(SourceCancelled, "extractor-cancel", partial(handlers.on_source_cancelled, deps),
            on_failure=source_failed),
        sub(ChunkExtracted, "extractor-merge", partial(handlers.on_chunk_extracted, deps)),
        sub(KbDeltaDecided, "extractor-deltas", partial(handlers.on_delta_decided, deps),
            on_failure=delta_failed),
        sub(KbDeltaProposed, "extractor-proposals", partial(handlers.on_delta_proposed, deps)),
    ]  # fmt: skip
    return ServiceSpec(
        deps=deps,
        subscriptions=subscriptions,
        broadcasts=[Broadcast(SourceCancelled, on_cancel_broadcast)],
        rpc=[
            Rpc(SYNC_HANDBOOK_SUBJECT, HandbookSyncRequest, on_sync, max_concurrency=2),
            Rpc(KB_IMPORT_SUBJECT, KbImportRequest, on_import, max_concurrency=1),
            Rpc(REGISTER_UPLOAD_SUBJECT, RegisterUploadRequest, on_register, max_concurrency=4),
            Rpc(GRAPH_ANALYZE_SUBJECT, GraphAnalyzeRequest, on_analyze, max_concurrency=1),
            Rpc(GRAPH_APPLY_SUBJECT, GraphApplyRequest, on_apply, max_concurrency=1),
            Rpc(GRAPH_UNDO_SUBJECT, GraphUndoRequest, on_undo, max_concurrency=1),
            *topic_rpcs(deps),
            *source_rpcs(deps),
        ],
        on_started=[sample],
        offline_plans=offline_plans(),
    )


async def ingest_sample_handbook_if_first_start(deps: ExtractorDeps) -> int:
    """On the first start (no sources, flag unset) publish the sample handbook for extraction.

    Source ids and event ids derive from the file contents, so a replica racing this one,
    or a restart after a crash half-way, publishes the same events (deduplicated).
    """
    store = deps.store
    if not deps.extractor.sample_handbook or await store.flags.get(SAMPLE_FLAG) is not None:
        return 0
    existing = await store.sources.list(limit=1000)
    if any(not s.id.startswith(SAMPLE_PREFIX) for s in existing):
        await store.flags.set(SAMPLE_FLAG, {"skipped": "sources existed on first start"})
        return 0
    published = 0
    for path in sorted(sample_handbook_dir().glob("*.md")):
        text = read_upload(path, max_bytes=deps.settings.max_upload_bytes)
        registration = await register_upload(
            store, name=f"sample_handbook/{path.name}", text=text, uploaded_by=ACTOR,
            actor=ACTOR, source_id=f"{SAMPLE_PREFIX}{sha256_text(text)[:16]}",
        )  # fmt: skip
        if registration.event is not None:
            await deps.publish(registration.event)
            published += 1
    await store.flags.set(
        SAMPLE_FLAG, {"published": published, "at": datetime.now(UTC).isoformat()}
    )
    log.info("first start: queued %d sample handbook file(s) for extraction", published)
    return published


def main() -> None:
    """`python -m services.extractor`: service_main, plus the extractor's own settings."""
    try:
        extractor = build_extractor_settings()
    except ValidationError as exc:  # locations and messages only: inputs may be secrets
        print(f"{NAME}: invalid settings: {describe_validation(exc)}", file=sys.stderr)
        sys.exit(2)
    except R42Error as exc:
        print(f"{NAME}: {exc}", file=sys.stderr)
        sys.exit(2)
    service_main(NAME, build=partial(build, extractor=extractor),
                 namespace=extractor.bus_namespace)  # fmt: skip
