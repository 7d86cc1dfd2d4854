"""Provenance of the graph: which source chunks assert each topic and relation, which topic
fields an admin set, and the before-image of bulk changes so they can be undone."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Literal, cast

from pydantic import BaseModel, ConfigDict, Field

from shared.errors import BadInputError
from shared.store._common import NonEmpty, TopicId, UtcDatetime
from shared.store.models import Assertion, KbChanges, Relation, RelationKey, Topic

CuratedField = Literal["created", "label", "type", "description", "learning_relevance", "metadata"]
CURATED_FIELDS: tuple[str, ...] = (
    "created", "label", "type", "description", "learning_relevance", "metadata",
)  # fmt: skip


def check_curated(fields: Iterable[str]) -> list[CuratedField]:
    """The distinct fields, sorted, or BadInputError naming the unknown ones."""
    chosen = sorted(set(fields))
    unknown = [f for f in chosen if f not in CURATED_FIELDS]
    if unknown:
        raise BadInputError(f"unknown curated field(s) {unknown}; expected {CURATED_FIELDS}")
    return cast(list[CuratedField], chosen)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Retraction(_Model):
    """What retracting a source's assertions did, and what is now asserted by no source."""

    removed: int = 0
    topic_ids: list[str] = Field(default_factory=list)
    relations: list[RelationKey] = Field(default_factory=list)
    orphan_topic_ids: list[str] = Field(default_factory=list)
    orphan_relations: list[RelationKey] = Field(default_factory=list)


class Unasserted(_Model):
    """Existing topics and relations that no source asserts (curated topics left out)."""

    topic_ids: list[str] = Field(default_factory=list)
    relations: list[RelationKey] = Field(default_factory=list)


class CurationMark(_Model):
    """An admin set this field of a topic (or created it): extraction must not overwrite it."""

    topic_id: TopicId
    field: CuratedField
    by: NonEmpty
    at: UtcDatetime | None = None


class UndoLabel(_Model):
    """Asks apply_kb_changes to log a before-image of what the change touches."""

    batch_id: NonEmpty
    actor: NonEmpty
    reason: str = ""


class ChangeBatch(_Model):
    """The before-image of one logged graph change; undo_changes(batch) restores it."""

    id: NonEmpty
    actor: NonEmpty
    reason: str = ""
    created_at: UtcDatetime | None = None
    topics_before: list[Topic] = Field(default_factory=list)
    topics_absent: list[TopicId] = Field(default_factory=list)
    relations_before: list[Relation] = Field(default_factory=list)
    relations_absent: list[RelationKey] = Field(default_factory=list)
    assertions_before: list[Assertion] = Field(default_factory=list)
    undone_at: datetime | None = None
    undone_by: str | None = None


def undo_changes(batch: ChangeBatch) -> KbChanges:
    """The graph change that puts back what a logged change found (topics, relations and the
    assertions its deletes removed). Assertions the change added to surviving subjects stay."""
    return KbChanges(
        relations_delete=batch.relations_absent,
        topics_delete=batch.topics_absent,
        topics_upsert=batch.topics_before,
        relations_upsert=batch.relations_before,
        assertions=batch.assertions_before,
    )
