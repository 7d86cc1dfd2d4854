"""The audit trail: who did what to which target, from which surface, and whether it was allowed."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from shared.store._common import NonEmpty, UtcDatetime, utcnow

AuditSurface = Literal["slack", "teams", "console", "cli"]
AUDIT_SURFACES: tuple[str, ...] = ("slack", "teams", "console", "cli")
AUDIT_LATEST_MAX = 500

# "topic.edit", "graph.apply", "quiz.bank_regenerate": dotted lowercase words.
AuditAction = Annotated[
    str, StringConstraints(max_length=80, pattern=r"^[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)+$")
]


class AuditEntry(BaseModel):
    """One admin action (or a refused attempt at one) with the state before and after."""

    model_config = ConfigDict(extra="forbid")

    actor: NonEmpty
    action: AuditAction
    target: Annotated[str, StringConstraints(strip_whitespace=True, max_length=500)]
    allowed: bool
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    at: UtcDatetime = Field(default_factory=utcnow)
    surface: AuditSurface
