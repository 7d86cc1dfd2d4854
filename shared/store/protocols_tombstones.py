"""Repository protocol of tombstones (topics an admin deleted)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from shared.store.models_tombstones import Tombstone


class TombstoneRepository(Protocol):
    """One tombstone per deleted topic id; extraction skips a tombstoned id."""

    async def add(self, tombstone: Tombstone) -> Tombstone:
        """Record (or replace) the tombstone of a topic id; returns it as stored."""

    async def get_many(self, topic_ids: Iterable[str]) -> dict[str, Tombstone]:
        """The tombstones among these topic ids, by id."""

    async def count_skips(self, topic_ids: Iterable[str], *, asserter: str) -> None:
        """Count one skipped assertion on each of these tombstones (others are ignored)."""

    async def remove(self, topic_ids: Iterable[str]) -> int:
        """Lift tombstones (an undo, an admin re-creating the topic); how many were there."""

    async def list(self, *, limit: int = 100) -> list[Tombstone]:
        """The newest tombstones first."""
