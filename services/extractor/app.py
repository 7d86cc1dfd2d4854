"""Wiring of the extractor service: subscribers, the cancel broadcast, the sample handbook.

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
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from services.extractor import handlers
from services.extractor.cancel import SourceTasks
from services.extractor.config import ExtractorSettings, build_extractor_settings
from services.extractor.handlers import ExtractorDeps
from services.extractor.offline import register_offline_handlers
from services.extractor.outcomes import ACTOR
from services.extractor.sync_rpc import answer_sync
from services.extractor.uploads import read_upload, register_upload, sha256_text
from shared.bus import (
    ChunkExtracted,
    Event,
    KbDeltaDecided,
    KbDeltaProposed,
    SourceCancelled,
    SourceUploaded,
    ns_subject,
    parse_event,
    publish_event,
    serve_rpc,
    subscribe_event,
)
from shared.bus.extractor_rpc import (
    SYNC_HANDBOOK_SUBJECT,
    HandbookSyncReply,
    HandbookSyncRequest,
)
from shared.errors import BadInputError, R42Error
from shared.runtime.service import ServiceContext, service_main
from shared.store import describe_validation

log = logging.getLogger(__name__)

NAME = "extractor"
SAMPLE_FLAG = "extractor.sample_handbook"
SAMPLE_PREFIX = "sample-"
Hook = Callable[[ServiceContext], Awaitable[None]]


def sample_handbook_dir() -> Path:
    """The bundled sample handbook (Dutch markdown files)."""
    return Path(__file__).resolve().parent / "sample_handbook"


def deps_of(ctx: ServiceContext) -> ExtractorDeps:
    """The extractor's handler dependencies on a running service."""
    deps = ctx.extras.get("extractor")
    if not isinstance(deps, ExtractorDeps):
        raise R42Error("the extractor is not registered on this service context")
    return deps


def build_hooks(extractor: ExtractorSettings | None = None) -> tuple[Hook, Hook]:
    """`register` and `on_started` for start_service (settings from the env by default)."""

    async def register(ctx: ServiceContext) -> None:
        ext = extractor or build_extractor_settings()
        register_offline_handlers()

        async def publish(event: Event) -> None:
            await publish_event(ctx.broker, event, namespace=ctx.namespace)

        deps = ExtractorDeps(store=ctx.store, publish=publish, limiter=ctx.limiter,
                             settings=ctx.settings, extractor=ext, tasks=SourceTasks())  # fmt: skip
        ctx.extras["extractor"] = deps
        common: dict[str, Any] = {
            "namespace": ctx.namespace,
            "actor": ACTOR,
            "max_deliver": ext.max_deliver,
            "ack_wait": ext.ack_wait_s,
        }
        subscribe_event(ctx.broker, SourceUploaded, durable="extractor-sources",
                        handler=partial(handlers.on_source_uploaded, deps),
                        max_workers=ext.source_workers, **common)  # fmt: skip
        subscribe_event(ctx.broker, SourceCancelled, durable="extractor-cancel",
                        handler=partial(handlers.on_source_cancelled, deps), **common)  # fmt: skip
        subscribe_event(ctx.broker, ChunkExtracted, durable="extractor-merge",
                        handler=partial(handlers.on_chunk_extracted, deps), **common)  # fmt: skip
        subscribe_event(ctx.broker, KbDeltaDecided, durable="extractor-deltas",
                        handler=partial(handlers.on_delta_decided, deps), **common)  # fmt: skip
        subscribe_event(ctx.broker, KbDeltaProposed, durable="extractor-proposals",
                        handler=partial(handlers.on_delta_proposed, deps), **common)  # fmt: skip

    async def on_started(ctx: ServiceContext) -> None:
        await listen_for_cancels(ctx)
        sync_lock = asyncio.Lock()

        async def on_sync(request: HandbookSyncRequest) -> HandbookSyncReply:
            return await answer_sync(request, deps=deps_of(ctx), lock=sync_lock)

        await serve_rpc(ctx.broker, SYNC_HANDBOOK_SUBJECT, request_model=HandbookSyncRequest,
                        handler=on_sync, namespace=ctx.namespace, max_concurrency=2)  # fmt: skip
        await ingest_sample_handbook_if_first_start(ctx)

    return register, on_started


async def listen_for_cancels(ctx: ServiceContext) -> None:
    """Hear every source.cancelled on core NATS (no queue group) and stop the local task."""
    tasks = deps_of(ctx).tasks

    async def on_message(msg: Any) -> None:
        try:
            event = parse_event(msg.subject, msg.data, namespace=ctx.namespace)
        except BadInputError as exc:
            log.warning("ignoring a malformed cancel broadcast: %s", exc)
            return
        if isinstance(event, SourceCancelled):
            tasks.cancel(event.source_id)

    subject = ns_subject(SourceCancelled.SUBJECT, ctx.namespace)
    sub = await ctx.broker.connection.subscribe(subject, cb=on_message)
    await ctx.broker.connection.flush()
    ctx.closers.append(sub.unsubscribe)


async def ingest_sample_handbook_if_first_start(ctx: ServiceContext) -> int:
    """On the first start (no sources, flag unset) publish the sample handbook for extraction.

    Source ids and event ids derive from the file contents, so a replica racing this one,
    or a restart after a crash half-way, publishes the same events (deduplicated).
    """
    deps = deps_of(ctx)
    store = deps.store
    if not deps.extractor.sample_handbook or await store.settings.get(SAMPLE_FLAG):
        return 0
    existing = await store.sources.list(limit=1000)
    if any(not s.id.startswith(SAMPLE_PREFIX) for s in existing):
        await store.settings.set(SAMPLE_FLAG, {"skipped": "sources existed on first start"})
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
    await store.settings.set(
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
    register, on_started = build_hooks(extractor)
    service_main(NAME, register=register, on_started=on_started, namespace=extractor.bus_namespace)
