"""Recording admin actions and refused attempts in the audit trail (never failing the action)."""

from __future__ import annotations

import logging
from typing import Any

from services.gateway.core.context import CoreContext
from shared.errors import R42Error
from shared.store import AuditEntry, AuditSurface

log = logging.getLogger(__name__)


async def audit(
    ctx: CoreContext, *, actor: str, action: str, target: str, allowed: bool,
    surface: AuditSurface, before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
) -> None:  # fmt: skip
    """Append one entry; a store failure is logged loudly, the admin's action stands."""
    try:
        entry = AuditEntry(actor=actor, action=action, target=target[:500], allowed=allowed,
                           before=before, after=after, surface=surface)  # fmt: skip
        await ctx.store.audit.record(entry)
    except (R42Error, ValueError) as exc:
        log.error("audit of %s by %s on %s not recorded: %s", action, actor, target, exc)
