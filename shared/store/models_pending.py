"""What waits for a merge: chunk results held for their predecessors, relations for an endpoint."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shared.store._common import NonEmpty, UtcDatetime
from shared.store.models import Relation


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class HeldChunk(_Model):
    """A chunk result that arrived before an earlier chunk of its source was merged."""

    source_id: NonEmpty
    chunk_index: int = Field(ge=0)
    payload: dict[str, Any]
    held_at: UtcDatetime | None = None


class PendingRelation(_Model):
    """A relation a source chunk asserts whose endpoint topic does not exist yet."""

    source_id: NonEmpty
    chunk_index: int = Field(ge=0)
    relation: Relation
    added_at: UtcDatetime | None = None

    @property
    def identity(self) -> tuple[str, int, str, str, str]:
        """(source id, chunk, relation source, target, type): one row per assertion."""
        return (self.source_id, self.chunk_index, *self.relation.key.as_tuple())
