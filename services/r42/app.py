"""Wiring of the r42 service: KB cache, offline handlers, rpc responders, kb.updated watch."""

from __future__ import annotations

import contextlib
import logging
from typing import Any

from services.r42.handlers import R42Handlers
from services.r42.knowledge import KbCache
from services.r42.offline import register_offline_handlers
from shared.bus import (
    CHAT_SUBJECT,
    CLEAR_SUBJECT,
    PROPOSAL_SUBJECT,
    ChatRequest,
    ClearRequest,
    Event,
    KbUpdated,
    ProposalDecisionRequest,
    ns_subject,
    publish_event,
    serve_rpc,
)
from shared.runtime.service import ServiceContext

log = logging.getLogger(__name__)

CHAT_CONCURRENCY = 32


async def register(ctx: ServiceContext) -> None:
    """Nothing durable to subscribe: r42 answers requests and watches kb.updated (on start)."""
    del ctx


async def on_started(ctx: ServiceContext) -> None:
    """Build the KB cache, register offline handlers, watch kb.updated, serve rpc.r42.*."""
    kb = KbCache(ctx.store)
    ctx.extras["r42_kb"] = kb
    ctx.closers.append(kb.aclose)
    register_offline_handlers(lambda: kb.current)

    async def publish(event: Event) -> None:
        await publish_event(ctx.broker, event, namespace=ctx.namespace)

    handlers = R42Handlers(
        store=ctx.store, kb=kb, publish=publish, admins=tuple(ctx.settings.admins)
    )
    await watch_kb_updates(ctx, kb)
    kb.warm()
    servers = [
        await serve_rpc(ctx.broker, CHAT_SUBJECT, request_model=ChatRequest,
                        handler=handlers.chat, namespace=ctx.namespace,
                        max_concurrency=CHAT_CONCURRENCY),
        await serve_rpc(ctx.broker, PROPOSAL_SUBJECT, request_model=ProposalDecisionRequest,
                        handler=handlers.proposal, namespace=ctx.namespace),
        await serve_rpc(ctx.broker, CLEAR_SUBJECT, request_model=ClearRequest,
                        handler=handlers.clear, namespace=ctx.namespace),
    ]  # fmt: skip
    for server in servers:
        ctx.closers.append(server.stop)


async def watch_kb_updates(ctx: ServiceContext, kb: KbCache) -> None:
    """Invalidate the KB snapshot on every kb.updated: a core subscription per replica.

    JetStream also delivers each published kb.updated to plain core-NATS subscribers of the
    subject; without a queue group every replica gets every event, and no consumer state is
    left on the server when a replica goes away.
    """

    async def on_update(msg: Any) -> None:
        del msg  # any kb.updated makes the snapshot stale; the payload is not needed
        kb.invalidate()

    subject = ns_subject(KbUpdated.SUBJECT, ctx.namespace)
    subscription = await ctx.broker.connection.subscribe(subject, cb=on_update)
    await ctx.broker.connection.flush()

    async def unsubscribe() -> None:
        with contextlib.suppress(Exception):
            await subscription.unsubscribe()

    ctx.closers.append(unsubscribe)
