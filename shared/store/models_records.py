"""Models of the extractor's and surfaces' own records: held extractions, the handbook tree
cache, which source is the current version of a document, and chat conversation references."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shared.store._common import NonEmpty, UtcDatetime
from shared.store.models import KbChanges, RelationKey


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class HeldChange(_Model):
    """An extraction over the bulk bound, waiting for an admin to release or discard it."""

    key: NonEmpty = Field(max_length=500)
    asserter: NonEmpty
    reason: str = ""
    updated_ids: list[str] = Field(default_factory=list)
    changes: KbChanges = Field(default_factory=KbChanges)
    # What the asserter asserts once the change is released.
    topics: list[str] = Field(default_factory=list)
    relations: list[RelationKey] = Field(default_factory=list)
    created_at: UtcDatetime | None = None


class HandbookTree(_Model):
    """The last file listing of a handbook folder and the ETag GitHub sent with it."""

    where: NonEmpty
    path: str = ""
    etag: str | None = None
    files: list[tuple[str, str, int]] = Field(default_factory=list)
    updated_at: UtcDatetime | None = None


class ConversationRef(_Model):
    """Where a surface can post into one conversation later (proactive messages)."""

    surface: NonEmpty = Field(max_length=40)
    conversation_id: NonEmpty = Field(max_length=1000)
    reference: dict[str, Any]
    # Set for a personal chat: the user whose chat with the bot this is.
    user_id: str | None = Field(default=None, max_length=200)
    updated_at: UtcDatetime | None = None
