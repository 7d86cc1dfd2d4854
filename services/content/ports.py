"""The content service's view of the store: its own content, the graph read-only."""

from __future__ import annotations

from typing import Protocol

from shared.store import (
    ContentRepository,
    CustomTopicRepository,
    IdempotencyRepository,
    LockRepository,
    Suggestion,
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

    async def ids(self) -> set[str]:
        """Every topic id."""
        ...


class SuggestionWriter(Protocol):
    """Only filing a suggestion for the KG owner's review (never deciding one)."""

    async def create(self, suggestion: Suggestion) -> Suggestion:
        """Store a new pending suggestion."""
        ...


class ContentStore(Protocol):
    """Only what the content service reads and writes."""

    @property
    def topics(self) -> TopicReader:
        """Topics, read-only."""
        ...

    @property
    def content(self) -> ContentRepository:
        """Generated learning content per topic."""
        ...

    @property
    def suggestions(self) -> SuggestionWriter:
        """Suggestions, create only."""
        ...

    @property
    def custom_topics(self) -> CustomTopicRepository:
        """Learning topics users asked for that the graph does not have."""
        ...

    @property
    def idempotency(self) -> IdempotencyRepository:
        """Requests already handled, with their outcome."""
        ...

    @property
    def locks(self) -> LockRepository:
        """Per-topic generation leases."""
        ...
