"""The known-ids hint from a bounded store query, not the whole topic list."""

from __future__ import annotations

from services.extractor.ports import ExtractorStore
from shared.kb import KNOWN_IDS_LIMIT


async def recent_topic_ids(store: ExtractorStore, limit: int = KNOWN_IDS_LIMIT) -> list[str]:
    """The `limit` most recently updated topic ids, oldest first (the hint's order)."""
    return list(reversed(await store.topics.recent_ids(limit)))  # the store gives newest first
