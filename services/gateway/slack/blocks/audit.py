"""Block Kit for the audit trail: the latest admin actions in App Home (admins only)."""

from __future__ import annotations

from services.gateway.slack.blocks.kit import (
    SAFE_SECTION_TEXT,
    Blocks,
    context,
    escape,
    mention,
    section,
    truncate,
)
from shared.store import AuditEntry

SURFACES = {"slack": "Slack", "teams": "Teams", "console": "console", "cli": "CLI"}


def audit_line(entry: AuditEntry) -> str:
    """One entry: when, who, what, on what, and a mark when it was refused."""
    refused = " · :no_entry: *geweigerd*" if not entry.allowed else ""
    return (
        f"• {entry.at:%d-%m %H:%M} {mention(entry.actor)} `{escape(entry.action)}` "
        f"{escape(truncate(entry.target, 120))} ({SURFACES.get(entry.surface, entry.surface)})"
        f"{refused}"
    )


def audit_home_blocks(entries: list[AuditEntry] | None) -> Blocks:
    """The latest admin actions; nothing for a non-admin (entries None)."""
    if entries is None:
        return []
    if not entries:
        return [section("*Laatste beheeracties:* geen")]
    lines = "\n".join(audit_line(e) for e in entries)
    return [
        section(truncate(f"*Laatste beheeracties*\n{lines}", SAFE_SECTION_TEXT)),
        context("Alles zien: `r42 ops audit` op de server."),
    ]
