"""Request/reply contract of the extractor's handbook sync (`rpc.extractor.sync_handbook`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SYNC_HANDBOOK_SUBJECT = "rpc.extractor.sync_handbook"
"""An admin asks for a GitHub handbook sync now: HandbookSyncRequest → HandbookSyncReply."""


class HandbookSyncRequest(BaseModel):
    """An admin asks the extractor to sync the GitHub handbook now."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user_id: str = Field(min_length=1, max_length=200)


SHOWN_WAITING = 5
"""A sync names at most this many waiting (or dropped) relations of each kind."""


class WaitingRelation(BaseModel):
    """A relation a handbook file asserts that waits for a topic (ids as in the graph)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(min_length=1, max_length=120)
    target: str = Field(min_length=1, max_length=120)
    type: str = Field(min_length=1, max_length=40)
    file: str = Field(min_length=1, max_length=500)
    """The handbook path that asserts it."""


class SyncWaiting(BaseModel):
    """After a complete sync: relations that wait for topics no file of the tree defines.

    Counts and the first few relations of each kind; every surface words it itself.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    newly_waiting: int = Field(default=0, ge=0)
    """Found waiting for the first time (each relation is reported once)."""
    expired: int = Field(default=0, ge=0)
    """Dropped now: they waited longer than `max_wait_days`."""
    still_waiting: int = Field(default=0, ge=0)
    """Every handbook relation that still waits (reported before or now)."""
    max_wait_days: int = Field(ge=1)
    newly_shown: list[WaitingRelation] = Field(default_factory=list, max_length=SHOWN_WAITING)
    expired_shown: list[WaitingRelation] = Field(default_factory=list, max_length=SHOWN_WAITING)


def named(shown: list[WaitingRelation], count: int) -> str:
    """The shown relations as `a → b (file)`, with `…` when `count` is more (no words)."""
    listed = "; ".join(f"{r.source} → {r.target} ({r.file})" for r in shown)
    return listed + (" …" if count > len(shown) else "")


class HandbookSyncReply(BaseModel):
    """How many handbook files changed, were unchanged or failed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    changed: int = Field(default=0, ge=0)
    unchanged: int = Field(default=0, ge=0)
    failed: int = Field(default=0, ge=0)
    message: str = Field(default="", max_length=4000)
    skipped: int = Field(default=0, ge=0)
    """Files left out: an unsupported format, an empty file or a scan without text."""
    skipped_shown: list[str] = Field(default_factory=list, max_length=SHOWN_WAITING)
    """The first of them (handbook paths)."""
    waiting: SyncWaiting | None = None
    """Set after a complete sync only (an incomplete one cannot know what no file defines)."""


KB_IMPORT_SUBJECT = "rpc.extractor.kb_import"
"""The operator's `r42 kb import` while the stack runs: KbImportRequest → KbImportReply."""


class KbImportRequest(BaseModel):
    """A graph document ({"topics": [...], "relations": [...]}) for the KG owner to import."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    doc: dict[str, Any]
    skip_invalid: bool = False
    actor: str = Field(default="cli", min_length=1, max_length=200)


class KbImportProblem(BaseModel):
    """One rejected row of an import document."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    section: Literal["topics", "relations"]
    index: int
    ident: str
    reason: str


class KbImportReply(BaseModel):
    """What was imported, or (rejected) why nothing was."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    topics: int = Field(default=0, ge=0)
    relations: int = Field(default=0, ge=0)
    rejected: bool = False
    problems: list[KbImportProblem] = Field(default_factory=list)


REGISTER_UPLOAD_SUBJECT = "rpc.extractor.register_upload"
"""An uploader registers a staged text as a source: RegisterUploadRequest → RegisterUploadReply.

The uploader first puts the text into the r42-sources object store under `text_ref` (texts
can exceed a NATS message); the extractor reads it, normalises and hashes it, applies its
duplicate rule, stores the source, announces `source.uploaded` and deletes the object. One
registration rule for every uploader.
"""


class RegisterUploadRequest(BaseModel):
    """A staged text to register as a source."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=500)
    text_ref: str = Field(min_length=1, max_length=500)
    uploaded_by: str = Field(min_length=1, max_length=200)


class RegisterUploadReply(BaseModel):
    """The registered source, or the completed source with the same name and content."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source_id: str
    name: str
    duplicate: bool = False
