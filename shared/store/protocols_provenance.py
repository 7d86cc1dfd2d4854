"""Repository protocols of provenance: assertions, curated fields and the change log."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Protocol

from shared.store.models import Assertion, RelationKey
from shared.store.models_provenance import (
    ChangeBatch,
    CuratedField,
    CurationMark,
    Retraction,
    Unasserted,
)


class ProvenanceRepository(Protocol):
    """Which source chunks assert each topic and relation (deleting a subject drops its rows)."""

    async def record(self, assertions: Iterable[Assertion], *, skip_missing: bool = False) -> int:
        """Record assertions of existing subjects (a repeat refreshes version and time).

        BadInputError, and nothing written, when a subject does not exist; with skip_missing
        those assertions are left out instead. Returns how many were recorded. Prefer
        KbChanges.assertions to record them with the graph change.
        """

    async def of_source(self, source_id: str) -> list[Assertion]:
        """Everything a source asserts, topics first, by subject then chunk."""

    async def sources_of(self, topic_ids: Iterable[str]) -> dict[str, list[str]]:
        """topic id -> the ids of the sources asserting it (sorted); unasserted ids absent."""

    async def sources_of_relations(
        self, keys: Iterable[RelationKey]
    ) -> dict[tuple[str, str, str], list[str]]:
        """(source, target, type) -> the ids of the sources asserting it."""

    async def retract(
        self,
        source_id: str,
        *,
        except_version: str | None = None,
        chunks: Iterable[int] | None = None,
    ) -> Retraction:
        """Remove a source's assertions (all, only some chunks, or all not of a version).

        The result names the subjects that lost an assertion and those of them that no
        source asserts any more (orphans; curated topics are never orphans).
        """

    async def unasserted(
        self,
        *,
        topic_ids: Iterable[str] | None = None,
        relations: Iterable[RelationKey] | None = None,
    ) -> Unasserted:
        """Existing, uncurated topics and existing relations no source asserts.

        With neither argument the whole graph is checked; otherwise only the given ones.
        """

    async def rename_source(self, old: str, new: str) -> int:
        """Move old's assertions to new (a renamed document); returns how many moved."""


class CurationRepository(Protocol):
    """Which topic fields an admin set (or that an admin created the topic)."""

    async def mark(
        self,
        topic_id: str,
        fields: Iterable[CuratedField],
        *,
        by: str,
        now: datetime | None = None,
    ) -> list[CurationMark]:
        """Mark fields as set by an admin (NotFoundError for a missing topic); returns all marks."""

    async def unmark(self, topic_id: str, fields: Iterable[str] | None = None) -> int:
        """Remove marks (all of the topic's when fields is None); returns how many."""

    async def of(self, topic_ids: Iterable[str]) -> dict[str, list[CurationMark]]:
        """The marks of each given topic that has any, by field."""

    async def curated_ids(self, topic_ids: Iterable[str] | None = None) -> set[str]:
        """Topics with at least one mark (among the given ids, or all)."""


class ChangeLogRepository(Protocol):
    """Before-images of graph changes, so each can be undone once."""

    async def record(self, batch: ChangeBatch) -> bool:
        """Log a before-image taken outside apply_kb_changes; False if its id is logged."""

    async def get(self, batch_id: str) -> ChangeBatch | None:
        """One logged change or None."""

    async def list(self, *, limit: int = 20) -> list[ChangeBatch]:
        """Logged changes, newest first."""

    async def mark_undone(
        self, batch_id: str, *, by: str, now: datetime | None = None
    ) -> ChangeBatch | None:
        """Record that a change was undone (once: None if missing or already undone)."""
