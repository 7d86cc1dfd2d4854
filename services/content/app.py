"""Wiring of the content service: offline handlers, subscribers, stale scan, refine rpc."""

from __future__ import annotations

import logging

from services.content import handlers
from services.content.offline import register_offline_handlers
from services.content.rpc import REFINE_SUBJECT, RefineReply, RefineRequest, answer_refine
from services.content.stale import mark_stale_content
from shared.bus import ContentRequested, KbUpdated, serve_rpc, subscribe_event
from shared.runtime.service import ServiceContext

log = logging.getLogger(__name__)

REQUESTS_DURABLE = "content"
KB_DURABLE = "content-kb"


async def register(ctx: ServiceContext) -> None:
    """Register offline handlers and the durable consumers (before the broker starts)."""
    register_offline_handlers()

    async def on_request(event: ContentRequested) -> None:
        await handlers.content_requested(event, ctx=ctx)

    async def on_kb(event: KbUpdated) -> None:
        await handlers.kb_updated(event, ctx=ctx)

    # Generation waits seconds on the model: a few at a time per replica, kept alive by
    # in_progress signals so JetStream does not hand them to another worker meanwhile.
    # A busy topic or an overloaded API is retried for a few minutes before the requester
    # is told to try again later (2 s doubling to 30 s, ten deliveries).
    subscribe_event(
        ctx.broker, ContentRequested, durable=REQUESTS_DURABLE, handler=on_request,
        namespace=ctx.namespace, actor="content", max_workers=4, ack_wait=60.0,
        max_deliver=10, nack_delay=2.0, max_nack_delay=30.0,
    )  # fmt: skip
    subscribe_event(
        ctx.broker, KbUpdated, durable=KB_DURABLE, handler=on_kb, namespace=ctx.namespace,
        actor="content",
    )  # fmt: skip


async def on_started(ctx: ServiceContext) -> None:
    """Flag content made with older prompts, then answer refinement requests."""
    stale = await mark_stale_content(ctx.store)
    if stale:
        log.info("%d content part(s) are stale; `r42 content regenerate --stale`", len(stale))

    async def refine(request: RefineRequest) -> RefineReply:
        return await answer_refine(request, store=ctx.store)

    server = await serve_rpc(
        ctx.broker, REFINE_SUBJECT, request_model=RefineRequest, handler=refine,
        namespace=ctx.namespace, max_concurrency=4,
    )  # fmt: skip
    ctx.closers.append(server.stop)
