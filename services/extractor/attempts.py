"""The extractor's retry-budget ledger: API attempts per chunk, kept in the store.

In the store (not in memory) so that a redelivery after a crash, or to another replica,
continues the count: a chunk costs at most `limit` API attempts however it is retried.
"""

from __future__ import annotations

from services.extractor.ports import ExtractorStore
from shared.llm import AttemptBudget

CHUNK_ATTEMPTS = 5
CHUNK_ATTEMPTS_PER_DELIVERY = 3
_PREFIX = "llm-attempts:"


class StoreLedger:
    """AttemptLedger on the store's flags (one small row per piece of work in progress)."""

    def __init__(self, store: ExtractorStore) -> None:
        self._store = store

    async def used(self, key: str) -> int:
        """Attempts recorded for key."""
        flag = await self._store.flags.get(_PREFIX + key)
        value = flag.value.get("used") if flag is not None and flag.value else 0
        return value if isinstance(value, int) and value >= 0 else 0

    async def record(self, key: str, used: int) -> None:
        """Store the count."""
        await self._store.flags.set(_PREFIX + key, {"used": used})

    async def forget(self, key: str) -> None:
        """Drop the count."""
        await self._store.flags.delete(_PREFIX + key)


def chunk_budget(store: ExtractorStore, source_id: str, index: int) -> AttemptBudget:
    """The budget of one chunk's extraction (every delivery of its source shares it)."""
    return AttemptBudget(
        key=f"extractor.chunk:{source_id}:{index}",
        ledger=StoreLedger(store),
        limit=CHUNK_ATTEMPTS,
        per_delivery=CHUNK_ATTEMPTS_PER_DELIVERY,
    )
