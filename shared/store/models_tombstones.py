"""Tombstones: topics an admin deleted, which extraction must not bring back."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from shared.store._common import NonEmpty, UtcDatetime


class Tombstone(BaseModel):
    """A topic an admin deleted: who, when, and the change an undo restores it from."""

    model_config = ConfigDict(extra="forbid")

    topic_id: NonEmpty
    label: str = Field(default="", max_length=200)
    deleted_by: NonEmpty
    deleted_at: UtcDatetime | None = None
    undo_id: str | None = None
    skipped: int = Field(default=0, ge=0)
    """How many extractions asserted the topic since and were not let to bring it back."""
    last_asserter: str | None = None
