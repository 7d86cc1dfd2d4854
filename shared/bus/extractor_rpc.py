"""Request/reply contract of the extractor's handbook sync (`rpc.extractor.sync_handbook`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

SYNC_HANDBOOK_SUBJECT = "rpc.extractor.sync_handbook"
"""An admin asks for a GitHub handbook sync now: HandbookSyncRequest → HandbookSyncReply."""


class HandbookSyncRequest(BaseModel):
    """An admin asks the extractor to sync the GitHub handbook now."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user_id: str = Field(min_length=1, max_length=200)
    is_admin: bool = False


class HandbookSyncReply(BaseModel):
    """How many handbook files changed, were unchanged or failed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    changed: int = Field(default=0, ge=0)
    unchanged: int = Field(default=0, ge=0)
    failed: int = Field(default=0, ge=0)
    message: str = Field(default="", max_length=4000)
