"""Wiring of the content service: subscribers, the stale scan, the refine rpc, offline plans."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from services.content import handlers
from services.content.offline import offline_plans
from services.content.ports import ContentStore
from services.content.rpc import REFINE_SUBJECT, RefineRequest
from services.content.service import Publish
from services.content.stale import mark_stale_content
from services.content.stale_rpc import answer_regenerate, answer_stale
from shared.bus import ContentRequested, KbUpdated
from shared.bus.stale_rpc import (
    STALE_LIST_SUBJECT,
    STALE_REGENERATE_SUBJECT,
    RegenerateReply,
    RegenerateRequest,
    StaleListReply,
    StaleListRequest,
)
from shared.runtime.service import Rpc, ServiceContext, ServiceSpec, Subscription

log = logging.getLogger(__name__)

REQUESTS_DURABLE = "content"
KB_DURABLE = "content-kb"


@dataclass(frozen=True)
class ContentDeps:
    """What the content handlers share: the store and a publisher."""

    store: ContentStore
    publish: Publish


def build(ctx: ServiceContext) -> ServiceSpec[ContentDeps]:
    """content.requested and kb.updated consumers, rpc.content.refine, the stale scan."""
    deps = ContentDeps(store=ctx.store, publish=ctx.publish)

    async def on_request(event: ContentRequested) -> None:
        await handlers.content_requested(event, store=deps.store, publish=deps.publish)

    async def on_kb(event: KbUpdated) -> None:
        await handlers.kb_updated(event, store=deps.store)

    async def refine(request: RefineRequest) -> handlers.RefineReply:
        return await handlers.refine(request, store=deps.store, admins=ctx.settings.admins)

    async def stale(request: StaleListRequest) -> StaleListReply:
        return await answer_stale(request, store=deps.store, admins=ctx.settings.admins)

    async def regenerate(request: RegenerateRequest) -> RegenerateReply:
        return await answer_regenerate(request, store=deps.store, admins=ctx.settings.admins)

    async def flag_stale() -> None:
        stale = await mark_stale_content(deps.store)
        if stale:
            log.info("%d content part(s) are stale; `r42 content regenerate --stale`", len(stale))

    return ServiceSpec(
        deps=deps,
        # Generation waits seconds on the model: a few at a time per replica, kept alive by
        # in_progress signals so JetStream does not hand them to another worker meanwhile.
        # A busy topic or an overloaded API is retried for a few minutes before the
        # requester is told to try again later (2 s doubling to 30 s, ten deliveries).
        subscriptions=[
            Subscription(
                ContentRequested,
                REQUESTS_DURABLE,
                on_request,
                max_workers=4,
                ack_wait=60.0,
                max_deliver=10,
                nack_delay=2.0,
                max_nack_delay=30.0,
            ),
            Subscription(KbUpdated, KB_DURABLE, on_kb),
        ],
        rpc=[
            Rpc(REFINE_SUBJECT, RefineRequest, refine, max_concurrency=4),
            Rpc(STALE_LIST_SUBJECT, StaleListRequest, stale, max_concurrency=2),
            Rpc(STALE_REGENERATE_SUBJECT, RegenerateRequest, regenerate, max_concurrency=1),
        ],
        on_started=[flag_stale],
        offline_plans=offline_plans(),
    )
