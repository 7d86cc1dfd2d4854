"""Repository protocol of the audit trail."""

from __future__ import annotations

from typing import Protocol

from shared.store.models_audit import AuditEntry


class AuditRepository(Protocol):
    """Admin actions and refused attempts, append-only."""

    async def record(self, entry: AuditEntry) -> None:
        """Append one entry (before/after must be JSON-serialisable, else BadInputError)."""

    async def latest(self, *, limit: int = 50, actor: str | None = None) -> list[AuditEntry]:
        """The newest entries first (of one actor when given); limit is 1..AUDIT_LATEST_MAX."""
