"""CLI: `r42 kb pending` — relations that wait for a topic, with their source and age."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from services.cli.kb import StoreOption, run_on_store, store_url
from shared.store import PendingRelation, Store, utcnow

LIMIT = 200


def age_text(since: datetime | None, now: datetime) -> str:
    """How long a relation has waited, in its largest whole unit ("3 d", "5 h", "12 min")."""
    if since is None:
        return "?"
    waited = max(now - since, timedelta(0))
    if waited >= timedelta(days=1):
        return f"{waited.days} d"
    if waited >= timedelta(hours=1):
        return f"{waited.seconds // 3600} h"
    return f"{waited.seconds // 60} min"


async def _read(store: Store, limit: int) -> tuple[list[PendingRelation], set[str], int]:
    rows = await store.pending_merges.all_relations(limit=limit)
    ends = {end for p in rows for end in (p.relation.source, p.relation.target)}
    present = {t.id for t in await store.topics.get_many(ends)}
    return rows, present, await store.pending_merges.count_relations()


def pending_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Show at most this many.")] = LIMIT,
    store: StoreOption = None,
) -> None:
    """Relations waiting for an endpoint topic: who asserted them, what they wait for, how long."""
    from services.extractor.pending import file_of, missing_ends
    from services.extractor.pending_bounds import MAX_WAIT

    rows, present, total = run_on_store(store_url(store), lambda s: _read(s, limit))
    now = utcnow()
    items: list[dict[str, Any]] = [
        {"source": p.source_id, "chunk": p.chunk_index, "relation": p.relation.source,
         "target": p.relation.target, "type": p.relation.type,
         "waits_for": missing_ends(p, present),
         "added_at": p.added_at.isoformat() if p.added_at else None,
         "age_s": int((now - p.added_at).total_seconds()) if p.added_at else None}
        for p in rows
    ]  # fmt: skip
    if as_json:
        typer.echo(json.dumps({"total": total, "shown": len(items), "pending": items}, indent=2))
        return
    console = Console(highlight=False, soft_wrap=True)
    if not rows:
        console.print(Text("no relations wait for a topic"))
        return
    table = Table(title=f"Pending relations: {total}", title_justify="left")
    for column in ("source", "relation", "waits for topic", "waiting"):
        table.add_column(column)
    for p, item in zip(rows, items, strict=True):
        relation = f"{p.relation.source} → {p.relation.target} ({p.relation.type})"
        table.add_row(Text(file_of(p.source_id)), Text(relation),
                      Text(", ".join(item["waits_for"]) or "(both exist: applied next merge)"),
                      age_text(p.added_at, now))  # fmt: skip
    console.print(table)
    if total > len(rows):
        console.print(Text(f"… {total - len(rows)} more (raise --limit)", style="dim"))
    console.print(Text(
        f"A handbook file's relations wait until their topic is synced; after a complete sync "
        f"they are reported once and dropped after {MAX_WAIT.days} days. An upload's relations "
        "are dropped when it completes.", style="dim"))  # fmt: skip
