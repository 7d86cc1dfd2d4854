"""The known-ids hint from a bounded store query, not the whole topic list."""

from __future__ import annotations

from shared.kb import KNOWN_IDS_LIMIT
from shared.store import Store


async def recent_topic_ids(store: Store, limit: int = KNOWN_IDS_LIMIT) -> list[str]:
    """The `limit` most recently updated topic ids, oldest first (the hint's order)."""
    return await store.topics.recent_ids(limit)
