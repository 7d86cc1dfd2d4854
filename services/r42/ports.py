"""The r42 service's view of the store: its threads and proposals, everything else read-only."""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from datetime import datetime
from typing import Protocol

from shared.store import (
    Content,
    ProposalRepository,
    QuizAttempt,
    Relation,
    RelationKey,
    Suggestion,
    ThreadRepository,
    Topic,
)


class TopicReader(Protocol):
    """Topics, read-only (the extractor owns the graph)."""

    async def get(self, topic_id: str) -> Topic | None:
        """One topic, or None."""
        ...

    async def list(self, *, type: str | None = None, relevance: str | None = None) -> list[Topic]:
        """Every topic (optionally of one type or relevance)."""
        ...

    async def get_many(self, topic_ids: Iterable[str]) -> builtins.list[Topic]:
        """The topics among these ids that exist."""
        ...

    async def page(self, *, after_id: str | None = None, limit: int = ...) -> builtins.list[Topic]:
        """Up to `limit` topics with ids after `after_id`, in id order (keyset paging)."""
        ...


class RelationReader(Protocol):
    """Relations, read-only."""

    async def list(self, *, topic_id: str | None = None, type: str | None = None) -> list[Relation]:
        """Relations (optionally touching one topic or of one type)."""
        ...

    async def touching(self, topic_ids: Iterable[str]) -> builtins.list[Relation]:
        """The relations with either endpoint among the ids."""
        ...

    async def page(
        self, *, after: RelationKey | None = None, limit: int = ...
    ) -> builtins.list[Relation]:
        """Up to `limit` relations with keys after `after`, in key order (keyset paging)."""
        ...


class ContentReader(Protocol):
    """Learning content, read-only (the content service writes it)."""

    async def get(self, topic_id: str) -> Content | None:
        """One topic's content, or None."""
        ...

    async def get_many(self, topic_ids: Iterable[str]) -> builtins.list[Content]:
        """The content of these topics that exists (one query)."""
        ...

    async def list(self) -> list[Content]:
        """Every topic's content."""
        ...


class QuizActivity(Protocol):
    """The quiz-active flag the quiz service keeps (read-only)."""

    async def get_active_attempt(
        self, user: str, *, now: datetime | None = None
    ) -> QuizAttempt | None:
        """The user's active, not idle-expired attempt."""
        ...


class SuggestionWriter(Protocol):
    """Only filing a suggestion for the KG owner's review (never deciding one)."""

    async def create(self, suggestion: Suggestion) -> Suggestion:
        """Store a new pending suggestion."""
        ...


class R42Store(Protocol):
    """Only what the r42 service reads and writes."""

    @property
    def topics(self) -> TopicReader:
        """Topics, read-only."""
        ...

    @property
    def relations(self) -> RelationReader:
        """Relations, read-only."""
        ...

    @property
    def content(self) -> ContentReader:
        """Learning content, read-only."""
        ...

    @property
    def quiz_attempts(self) -> QuizActivity:
        """The quiz-active flag, read-only."""
        ...

    @property
    def threads(self) -> ThreadRepository:
        """Conversation memory per user."""
        ...

    @property
    def suggestions(self) -> SuggestionWriter:
        """Suggestions, create only."""
        ...

    @property
    def proposals(self) -> ProposalRepository:
        """Proposals awaiting the user's Yes / No."""
        ...
