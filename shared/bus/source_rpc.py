"""Request/reply contract of deleting a source on the KG owner (`rpc.extractor.source_delete`).

Every chat surface (Slack, the console) sends the same request, first without `confirm` (what
would go: the topics only this source asserts, those kept for review, the relations, the
bound), then with it. The extractor authorises the actor against its own admin list,
refuses a deletion over the bound unless the admin raised it explicitly, records the
before-image (undo id), audits the attempt (refusals too) and announces kb.updated. A reply
never raises for a refusal: `outcome` says what happened, each surface words it itself.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.store import AuditSurface

SOURCE_DELETE_SUBJECT = "rpc.extractor.source_delete"
"""An admin previews or deletes a source: SourceDeleteRequest → SourceDeleteReply."""

SourceDeleteOutcome = Literal[
    "preview",  # nothing changed; removed/flagged/relations say what a delete would do
    "done",  # deleted; undo_id restores the graph
    "already_deleted",  # this actor deleted it before (a second click): the first result
    "refused",  # the actor is not an admin
    "not_found",  # no such source
    "busy",  # the source is still being extracted (cancel it first)
    "over_bound",  # more topics would go than the bound allows; nothing changed
]

SOURCE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$"
MAX_LISTED = 500  # ids listed in a reply; the counts are always whole


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SourceDeleteRequest(_Frozen):
    """Preview (confirm False) or delete one source; who acts is authorised by the owner."""

    actor: str = Field(min_length=1, max_length=200)
    surface: AuditSurface
    source_id: str = Field(pattern=SOURCE_ID_PATTERN)
    confirm: bool = False
    max_deletions: int | None = Field(default=None, ge=0, le=1_000_000)
    """An explicitly raised bound on the topics removed (None: the default bound)."""


class SourceDeleteReply(_Frozen):
    """What a delete does (preview) or did: the topics that go, those kept, the undo id."""

    outcome: SourceDeleteOutcome
    detail: str = Field(default="", max_length=2000)
    source_name: str = Field(default="", max_length=500)
    removed: list[str] = Field(default_factory=list, max_length=MAX_LISTED)
    """Topic ids only this source asserts: they leave the graph (first MAX_LISTED)."""
    removed_count: int = Field(default=0, ge=0)
    flagged: list[str] = Field(default_factory=list, max_length=MAX_LISTED)
    """Topic ids only this source asserts that an admin made or curated: kept, for review."""
    relations: int = Field(default=0, ge=0)
    """Relations that go: those only this source asserts and those of removed topics."""
    graph_size: int = Field(default=0, ge=0)
    bound: int = Field(default=0, ge=0)
    undo_id: str | None = Field(default=None, max_length=100)

    @property
    def over_bound(self) -> bool:
        """Whether more topics go than the bound allows."""
        return self.removed_count > self.bound
