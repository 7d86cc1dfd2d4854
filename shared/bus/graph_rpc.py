"""Request/reply contract of graph analysis by the KG owner (`rpc.extractor.graph_*`).

An admin asks for an analysis (the plan is stored by the extractor under a plan id), applies
a selection of its actions (re-validated against the graph, bounded, undoable) or undoes an
applied change. The extractor authorises every request against its own admin list; errors
come back as error replies (bad_input) with a Dutch message for chat surfaces and a typed
reason (`code` in GraphErrorCode, `params`) that other surfaces (the CLI) word themselves.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

GRAPH_ANALYZE_SUBJECT = "rpc.extractor.graph_analyze"
"""GraphAnalyzeRequest → GraphPlanReply (the model call can take a minute)."""
GRAPH_APPLY_SUBJECT = "rpc.extractor.graph_apply"
"""GraphApplyRequest → GraphApplyReply."""
GRAPH_UNDO_SUBJECT = "rpc.extractor.graph_undo"
"""GraphUndoRequest → GraphUndoReply."""

GraphErrorCode = Literal[
    "not_admin",  # no params
    "analysis_running",  # no params
    "plan_unknown",  # no params
    "nothing_to_apply",  # no params
    "over_bound",  # deleting, size, bound
    "graph_changed",  # no params
    "no_such_change",  # undo_id
]
"""Why the KG owner refused a graph request (the error's `code`; `params` as noted)."""

_User = Field(min_length=1, max_length=200)
_PlanId = Field(min_length=1, max_length=100, pattern=r"^plan-[0-9a-f]{8,64}$")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GraphAnalyzeRequest(_Model):
    """Who asks (authorised by the extractor, never by a field of the request)."""

    user_id: str = _User


class PlanAction(_Model):
    """One action of a plan, as the admin chooses it (`what`/`why` Dutch, `*_en` English)."""

    key: str = Field(min_length=2, max_length=8, pattern=r"^[mdrv]\d{1,3}$")
    kind: Literal["merge", "delete", "relation", "relevance"]
    what: str = Field(max_length=4000)
    why: str = Field(default="", max_length=4000)
    what_en: str = Field(default="", max_length=4000)
    why_en: str = Field(default="", max_length=4000)


class GraphPlanReply(_Model):
    """The stored plan: its actions, what was refused and the deletion bound."""

    plan_id: str = ""
    summary: str = Field(default="", max_length=4000)
    actions: list[PlanAction] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)
    """Refused actions, in Dutch (chat surfaces); `skipped_en` the same in English (the CLI)."""
    skipped_en: list[str] = Field(default_factory=list)
    graph_size: int = Field(default=0, ge=0)
    bound: int = Field(default=0, ge=0)


class GraphApplyRequest(_Model):
    """Apply these actions of a stored plan (or, with `every`, all of them)."""

    user_id: str = _User
    plan_id: str = _PlanId
    keys: list[str] = Field(default_factory=list, max_length=600)
    every: bool = False
    max_deletions: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _chosen(self) -> Self:
        if not self.keys and not self.every:
            raise ValueError("choose at least one action (keys) or every action")
        return self


class GraphApplyReply(_Model):
    """What changed, and the id that undoes it."""

    undo_id: str
    merged: int = Field(default=0, ge=0)
    deleted: int = Field(default=0, ge=0)
    relations: int = Field(default=0, ge=0)
    relevance: int = Field(default=0, ge=0)


class GraphUndoRequest(_Model):
    """Undo one applied change (the id from GraphApplyReply or `r42 graph undo --list`)."""

    user_id: str = _User
    undo_id: str = Field(min_length=1, max_length=100)


class GraphUndoReply(_Model):
    """How many topics were restored or removed."""

    undo_id: str
    topics: int = Field(default=0, ge=0)
