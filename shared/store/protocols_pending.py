"""Repository protocol of pending merges: held chunk results and relations waiting for a topic."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from shared.store.models_pending import HeldChunk, PendingRelation


class PendingMergeRepository(Protocol):
    """Per source: chunk results held until their predecessors merge, and pending relations."""

    async def hold(self, source_id: str, chunk_index: int, payload: dict[str, Any]) -> bool:
        """Keep a chunk result until it can be merged; False when it was held already (kept)."""

    async def held(self, source_id: str, chunk_index: int) -> HeldChunk | None:
        """One held chunk result or None."""

    async def held_indexes(self, source_id: str) -> list[int]:
        """The chunk indexes held for a source, ascending."""

    async def release(self, source_id: str, chunk_index: int) -> bool:
        """Forget a held chunk result (it was merged); False when none was held."""

    async def add_relations(self, relations: Iterable[PendingRelation]) -> int:
        """Keep relations until both endpoints exist (a repeat is ignored); returns how many new."""

    async def relations_of(self, source_id: str) -> list[PendingRelation]:
        """A source's pending relations, by chunk then key."""

    async def relations_touching(self, topic_ids: Iterable[str]) -> list[PendingRelation]:
        """Pending relations of any source with an endpoint among `topic_ids`."""

    async def all_relations(self, *, limit: int = 1000) -> list[PendingRelation]:
        """Every source's pending relations, longest waiting first, at most `limit`."""

    async def count_relations(self) -> int:
        """How many pending relations wait, over every source."""

    async def remove_relations(self, relations: Iterable[PendingRelation]) -> int:
        """Forget these pending relations (applied or dropped); returns how many were there."""

    async def clear(self, source_id: str) -> tuple[int, int]:
        """Forget everything a source has waiting; returns (chunks, relations) removed."""
