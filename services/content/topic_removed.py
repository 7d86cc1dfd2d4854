"""A topic the KG owner removed takes its learning content along (kb.updated's removed ids)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from services.content.ports import ContentStore

log = logging.getLogger(__name__)


async def drop_removed_content(store: ContentStore, removed_ids: Iterable[str]) -> int:
    """Delete the content of removed topics; how many existed (a redelivery finds none)."""
    dropped = 0
    for topic_id in sorted(set(removed_ids)):
        if await store.content.delete(topic_id):
            dropped += 1
    if dropped:
        log.info("dropped the content of %d removed topic(s)", dropped)
    return dropped
