"""CLI command: `r42 ops audit` — the latest admin actions and refusals, 80 columns wide."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from services.cli.kb import StoreOption, run_on_store, store_url
from shared.store import AuditEntry
from shared.store.models_audit import AUDIT_LATEST_MAX

WIDTH = 80


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _changes(entry: AuditEntry) -> str:
    """before → after of the keys that differ (all keys when one side is missing)."""
    before, after = entry.before or {}, entry.after or {}
    keys = [k for k in {**before, **after} if before.get(k) != after.get(k)]
    parts = []
    for key in keys:
        old, new = before.get(key), after.get(key)
        if key in before and key in after:
            parts.append(f"{key}: {_short(old)} -> {_short(new)}")
        elif key in after:
            parts.append(f"{key}={_short(new)}")
        else:
            parts.append(f"-{key}")
    return "; ".join(parts)


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return _clip(text, 30)


def audit_lines(entries: list[AuditEntry]) -> list[str]:
    """One header plus one line per entry (and an indented change line), none over 80 chars."""
    head = f"{'time (UTC)':<16} {'actor':<14} {'surface':<7} {'action':<18} {'result':<7} target"
    lines = [head, "-" * WIDTH]
    for e in entries:
        result = "ok" if e.allowed else "REFUSED"
        row = (
            f"{e.at:%Y-%m-%d %H:%M} {_clip(e.actor, 14):<14} {e.surface:<7} "
            f"{_clip(e.action, 18):<18} {result:<7} "
        )
        lines.append(row + _clip(e.target, WIDTH - len(row)))
        if changes := _changes(e):
            lines.append(_clip(f"{'':<17}{changes}", WIDTH))
    return lines


def audit_command(
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=AUDIT_LATEST_MAX, help="How many entries.")
    ] = 50,
    actor: Annotated[
        str | None, typer.Option("--actor", help="Only this user's actions.", show_default=False)
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
    store: StoreOption = None,
) -> None:
    """Show the latest admin actions (and refused attempts), newest first."""
    entries = run_on_store(store_url(store), lambda s: s.audit.latest(limit=limit, actor=actor))
    if as_json:
        for entry in entries:
            typer.echo(json.dumps(entry.model_dump(mode="json"), ensure_ascii=False))
        return
    if not entries:
        typer.echo("no admin actions recorded yet")
        return
    typer.echo("\n".join(audit_lines(entries)))
