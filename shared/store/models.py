"""Domain models of the knowledge graph, sources, suggestions and the handbook sync."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from shared.store._common import NonEmpty, TopicId, UtcDatetime

TopicType = Literal["concept", "role", "process"]
LearningRelevance = Literal["core", "standard", "peripheral", "exclude"]
RelationType = Literal["related_to", "depends_on", "part_of", "executed_by"]
SourceStatus = Literal["pending", "processing", "completed", "failed", "cancelled"]
SuggestionStatus = Literal["pending", "approved", "rejected"]

TOPIC_TYPES: tuple[str, ...] = ("concept", "role", "process")
LEARNING_RELEVANCES: tuple[str, ...] = ("core", "standard", "peripheral", "exclude")
RELATION_TYPES: tuple[str, ...] = ("related_to", "depends_on", "part_of", "executed_by")
SOURCE_STATUSES: tuple[str, ...] = ("pending", "processing", "completed", "failed", "cancelled")


class _Model(BaseModel):
    # Unknown fields are typos or foreign data: reject them rather than drop them silently.
    model_config = ConfigDict(extra="forbid", frozen=False)


class TopicMetadata(BaseModel):
    """Where a topic came from; extra keys are kept (it is the extensible bag)."""

    model_config = ConfigDict(extra="allow")

    source: str | None = None
    prompt_version: str | None = None


class Topic(_Model):
    """A node of the knowledge graph."""

    id: TopicId
    label: NonEmpty = Field(max_length=200)
    type: TopicType
    description: str = ""
    learning_relevance: LearningRelevance = "standard"
    relevance_locked: bool = False
    metadata: TopicMetadata = Field(default_factory=TopicMetadata)
    # Set by the store (UTC, millisecond precision); plain datetimes keep bulk reads fast.
    created_at: datetime | None = None
    updated_at: datetime | None = None


class RelationKey(_Model):
    """The identity of a relation: unique per (source, target, type)."""

    source: TopicId
    target: TopicId
    type: RelationType

    def as_tuple(self) -> tuple[str, str, str]:
        """(source, target, type)."""
        return (self.source, self.target, self.type)


class Relation(RelationKey):
    """A typed, directed edge between two topics."""

    description: str | None = None

    @model_validator(mode="after")
    def _no_self_loop(self) -> Relation:
        if self.source == self.target:
            raise ValueError(f"relation points at itself ({self.source!r})")
        return self

    @property
    def key(self) -> RelationKey:
        """This relation's identity."""
        return RelationKey(source=self.source, target=self.target, type=self.type)


class ChunkMark(_Model):
    """Identifies one chunk of a source whose merge is recorded with its KB changes."""

    source_id: NonEmpty
    chunk_index: int = Field(ge=0)


class Assertion(_Model):
    """One chunk of one source asserts a topic (topic_id) or a relation (relation), not both.

    `version` names what asserted it (e.g. the source's sha256 or an extraction run), so a
    re-extraction can retract exactly what the previous version asserted and this one did not.
    """

    source_id: NonEmpty
    chunk_index: int = Field(default=0, ge=0)
    topic_id: TopicId | None = None
    relation: RelationKey | None = None
    version: str = ""
    asserted_at: UtcDatetime | None = None

    @model_validator(mode="after")
    def _one_subject(self) -> Assertion:
        if (self.topic_id is None) == (self.relation is None):
            raise ValueError("an assertion names either a topic_id or a relation")
        return self

    @property
    def subject(self) -> tuple[str, str]:
        """(kind, key): ('topic', id) or ('relation', 'source|target|type')."""
        if self.relation is not None:
            return ("relation", relation_subject(self.relation))
        return ("topic", self.topic_id or "")


def relation_subject(key: RelationKey) -> str:
    """A relation's key as one string; kebab-case ids never contain '|'."""
    return "|".join(key.as_tuple())


def relation_from_subject(subject: str) -> RelationKey:
    """The inverse of relation_subject."""
    source, target, type_ = subject.split("|")
    return RelationKey.model_validate({"source": source, "target": target, "type": type_})


class KbChanges(_Model):
    """One atomic change to the graph (a merged chunk, an approved delta, an import)."""

    topics_upsert: list[Topic] = Field(default_factory=list)
    relations_upsert: list[Relation] = Field(default_factory=list)
    relations_delete: list[RelationKey] = Field(default_factory=list)
    topics_delete: list[TopicId] = Field(default_factory=list)
    # Recorded after the upserts, in the same transaction: a merged chunk and the
    # provenance of what it asserts are written together or not at all.
    assertions: list[Assertion] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        """Whether there is nothing to apply."""
        return not (
            self.topics_upsert
            or self.relations_upsert
            or self.relations_delete
            or self.topics_delete
            or self.assertions
        )


class KbChangeResult(_Model):
    """What apply_kb_changes did; applied is False when the chunk had been merged before."""

    applied: bool
    topic_ids_upserted: list[str] = Field(default_factory=list)
    topic_ids_deleted: list[str] = Field(default_factory=list)
    relations_upserted: int = 0
    relations_deleted: int = 0


class TopicCounts(_Model):
    """Topic totals for `r42 kb stats`."""

    total: int
    by_type: dict[str, int]
    by_relevance: dict[str, int]


class Source(_Model):
    """An uploaded document or handbook file being extracted."""

    id: NonEmpty
    name: NonEmpty
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    status: SourceStatus = "pending"
    error: str | None = None
    chunks_done: int = Field(default=0, ge=0)
    chunks_total: int | None = Field(default=None, ge=0)
    who: str | None = None
    created_at: UtcDatetime | None = None
    updated_at: UtcDatetime | None = None


class Suggestion(_Model):
    """A proposed graph delta waiting for an admin's decision."""

    id: NonEmpty
    delta: dict[str, Any]
    proposed_by: NonEmpty
    status: SuggestionStatus = "pending"
    decided_by: str | None = None
    decided_at: UtcDatetime | None = None
    context: dict[str, Any] = Field(default_factory=dict)
    created_at: UtcDatetime | None = None

    @field_validator("delta")
    @classmethod
    def _delta_not_empty(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not value:
            raise ValueError("a suggestion needs a non-empty delta")
        return value


class HandbookSyncState(_Model):
    """The git blob sha last ingested for one handbook file."""

    path: NonEmpty
    sha: NonEmpty
    updated_at: UtcDatetime | None = None
