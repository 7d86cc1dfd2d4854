"""Thin bus handlers: parse the event, call the service, publish."""

from __future__ import annotations

import logging

from services.content.service import handle_content_requested
from services.content.stale import on_kb_updated
from shared.bus import ContentRequested, Event, KbUpdated, current_delivery, publish_event
from shared.runtime.service import ServiceContext

log = logging.getLogger(__name__)


async def content_requested(event: ContentRequested, *, ctx: ServiceContext) -> None:
    """Generate (or reuse) the requested content and publish content.ready."""
    delivery = current_delivery()

    async def publish(ready: Event) -> None:
        await publish_event(ctx.broker, ready, namespace=ctx.namespace)

    await handle_content_requested(
        event, store=ctx.store, publish=publish, last_attempt=delivery is None or delivery.last
    )


async def kb_updated(event: KbUpdated, *, ctx: ServiceContext) -> None:
    """Flag content of topics whose label or description changed."""
    flagged = await on_kb_updated(ctx.store, changed_ids=event.changed_ids)
    if flagged:
        log.info("kb.updated %s: content of %d topic(s) is stale", event.kb_hash, len(flagged))
