"""The quiz service's view of the store: its own quiz data, the graph read-only."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from shared.store import (
    CurriculumRepository,
    QuizAttemptRepository,
    QuizBankRepository,
    Relation,
    ScoreRepository,
    Topic,
)


class TopicReader(Protocol):
    """Topics, read-only (the extractor owns the graph)."""

    async def get(self, topic_id: str) -> Topic | None:
        """One topic, or None."""
        ...

    async def get_many(self, topic_ids: Iterable[str]) -> list[Topic]:
        """The topics of these ids that exist."""
        ...

    async def list(self, *, type: str | None = None, relevance: str | None = None) -> list[Topic]:
        """Every topic (optionally of one type or relevance)."""
        ...


class RelationReader(Protocol):
    """Relations, read-only."""

    async def list(self, *, topic_id: str | None = None, type: str | None = None) -> list[Relation]:
        """Relations (optionally touching one topic or of one type)."""
        ...


class QuizStore(Protocol):
    """Only what the quiz service reads and writes."""

    @property
    def topics(self) -> TopicReader:
        """Topics, read-only."""
        ...

    @property
    def relations(self) -> RelationReader:
        """Relations, read-only."""
        ...

    @property
    def curriculum(self) -> CurriculumRepository:
        """The weekly curriculum (read for the week's topic)."""
        ...

    @property
    def quiz_banks(self) -> QuizBankRepository:
        """Question banks per topic."""
        ...

    @property
    def quiz_attempts(self) -> QuizAttemptRepository:
        """Attempts per user and week."""
        ...

    @property
    def scores(self) -> ScoreRepository:
        """Points per user and week."""
        ...
