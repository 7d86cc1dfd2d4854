"""Thin bus handlers: parse the event, call the domain, publish."""

from __future__ import annotations

import logging
from collections.abc import Collection

from services.content.ports import ContentStore
from services.content.rpc import RefineReply, RefineRequest, answer_refine
from services.content.service import Publish, handle_content_requested
from services.content.stale import on_kb_updated
from services.content.topic_removed import drop_removed_content
from shared.bus import ContentRequested, KbUpdated, current_delivery

__all__ = ["RefineReply", "content_requested", "kb_updated", "refine"]

log = logging.getLogger(__name__)


async def content_requested(
    event: ContentRequested, *, store: ContentStore, publish: Publish
) -> None:
    """Generate (or reuse) the requested content and publish content.ready."""
    delivery = current_delivery()
    await handle_content_requested(
        event, store=store, publish=publish, last_attempt=delivery is None or delivery.last
    )


async def kb_updated(event: KbUpdated, *, store: ContentStore) -> None:
    """Flag content of topics whose label or description changed; drop removed topics' content."""
    await drop_removed_content(store, event.removed_ids)
    flagged = await on_kb_updated(store, changed_ids=event.changed_ids)
    if flagged:
        log.info("kb.updated %s: content of %d topic(s) is stale", event.kb_hash, len(flagged))


async def refine(
    request: RefineRequest, *, store: ContentStore, admins: Collection[str]
) -> RefineReply:
    """rpc.content.refine: an admin's instruction applied as patch operations."""
    return await answer_refine(request, store=store, admins=admins)
