"""CLI commands: `r42 kb import|export|stats|pending`, working directly on the configured store."""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table
from rich.text import Text

from shared.bus import Event
from shared.bus import request as rpc_request
from shared.bus.extractor_rpc import KB_IMPORT_SUBJECT, KbImportReply, KbImportRequest
from shared.config import build_settings
from shared.errors import R42Error
from shared.store import (
    ImportRejectedError,
    RowProblem,
    Store,
    describe_validation,
    export_kb,
    kb_stats,
    open_store,
    read_kb_file,
    redact_url,
)

T = TypeVar("T")

StoreOption = Annotated[
    str | None,
    typer.Option(
        "--store",
        help="Store URL (sqlite:///ABS/PATH or mongodb://…); default: R42_STORE or the data dir.",
        show_default=False,
    ),
]


def store_url(option: str | None) -> str:
    """The store URL: --store, else the settings (R42_STORE or the SQLite file in the data dir)."""
    if option:
        return option
    try:
        return build_settings().store_url
    except ValidationError as exc:
        fail(f"invalid settings: {describe_validation(exc)}")


def run_on_store[T](url: str, action: Callable[[Store], Awaitable[T]]) -> T:
    """Open the store, run action, close; R42 errors become a clean message and exit code 1."""

    async def main() -> T:
        store = await open_store(url)
        try:
            return await action(store)
        finally:
            await store.close()

    try:
        return asyncio.run(main())
    except ImportRejectedError as exc:
        Console(stderr=True, highlight=False).print(
            problems_table(exc.problems, title=f"Rejected {len(exc.problems)} invalid row(s)")
        )
        fail(str(exc))
    except R42Error as exc:
        fail(str(exc))


def fail(message: str, *, code: int = 1) -> NoReturn:
    """Print an error to stderr and exit (never returns)."""
    Console(stderr=True, highlight=False, soft_wrap=True).print(
        Text(f"error: {message}", style="red")
    )
    raise typer.Exit(code)


def problems_table(problems: list[RowProblem], *, title: str) -> Table:
    """The rejected rows as a table: section, row index, id, reason."""
    table = Table(title=title, title_justify="left")
    table.add_column("section")
    table.add_column("row", justify="right")
    table.add_column("id")
    table.add_column("reason", overflow="fold")
    for problem in problems:
        table.add_row(
            problem.section, str(problem.index), Text(problem.ident), Text(problem.reason)
        )
    return table


def write_atomically(path: Path, text: str) -> None:
    """Write a file via a temp file and rename, so a failed export never leaves half a file."""
    if not path.parent.is_dir():
        fail(f"cannot write {path}: directory {path.parent} does not exist")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def import_command(
    file: Annotated[Path, typer.Argument(help='JSON file {"topics": [...], "relations": [...]}')],
    skip_invalid: Annotated[
        bool, typer.Option("--skip-invalid", help="Import the valid rows, report the others.")
    ] = False,
    store: StoreOption = None,
) -> None:
    """Import topics and relations from a JSON file (all rows validated first)."""
    try:
        doc = read_kb_file(file)
    except R42Error as exc:
        fail(str(exc))
    url = store_url(store)
    err = Console(stderr=True, highlight=False)
    try:
        reply, where = asyncio.run(_import(doc, skip_invalid=skip_invalid, store_option=store))
    except R42Error as exc:
        fail(str(exc))
    problems = [RowProblem(**p.model_dump()) for p in reply.problems]
    if reply.rejected:
        err.print(problems_table(problems, title=f"Rejected {len(problems)} invalid row(s)"))
        fail(str(ImportRejectedError(problems)))
    if problems:
        err.print(problems_table(problems, title=f"Skipped {len(problems)} invalid row(s)"))
    Console(highlight=False, soft_wrap=True, markup=False).print(
        f"imported {reply.topics} topic(s) and {reply.relations} relation(s) "
        f"into {redact_url(url) if where is None else where}"
    )


async def _import(
    doc: dict[str, Any], *, skip_invalid: bool, store_option: str | None
) -> tuple[KbImportReply, str | None]:
    """Through the KG owner: over the bus when the stack runs, else its code in-process."""
    from services.extractor.kb_import import answer_import
    from services.extractor.session import admin_session

    settings = build_settings(**({"store": store_option} if store_option else {}))
    request = KbImportRequest(doc=doc, skip_invalid=skip_invalid, actor="cli")
    async with admin_session(settings) as session:
        if session.broker is not None and store_option is None:
            reply = await rpc_request(
                session.broker, KB_IMPORT_SUBJECT, request, response_model=KbImportReply,
                timeout=60.0, namespace=session.namespace,
            )  # fmt: skip
            return reply, "the running stack (the extractor announced kb.updated)"

        async def no_bus(event: Event) -> None:
            del event  # nothing runs that could hear kb.updated; readers load the store

        return await answer_import(request, store=session.store, publish=no_bus), None


def export_command(
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write to FILE instead of stdout.")
    ] = None,
    store: StoreOption = None,
) -> None:
    """Export the whole graph as JSON (the import format; import ∘ export round-trips)."""
    url = store_url(store)
    doc: dict[str, Any] = run_on_store(url, export_kb)
    text = json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    if out is None:
        typer.echo(text, nl=False)
        return
    try:
        write_atomically(out, text)
    except OSError as exc:
        fail(f"cannot write {out}: {exc.strerror}")
    Console(stderr=True, highlight=False, soft_wrap=True, markup=False).print(
        f"exported {len(doc['topics'])} topic(s) and {len(doc['relations'])} relation(s) to {out}"
    )


def stats_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    store: StoreOption = None,
) -> None:
    """Counts of topics by type and relevance, relations by type, sources by status."""
    stats = run_on_store(store_url(store), kb_stats)
    if as_json:
        typer.echo(stats.model_dump_json(indent=2))
        return
    console = Console(highlight=False)
    console.print(Text(f"topics: {stats.topics.total}"))
    for title, counts in (
        ("Topics by type", stats.topics.by_type),
        ("Topics by learning relevance", stats.topics.by_relevance),
        ("Relations by type", stats.relations_by_type),
        ("Sources by status", stats.sources_by_status),
    ):
        table = Table(title=title, title_justify="left")
        table.add_column("value")
        table.add_column("count", justify="right")
        for key, count in sorted(counts.items()):
            table.add_row(Text(key), str(count))
        if not counts:
            table.add_row(Text("(none)", style="dim"), "0")
        console.print(table)


def backfill_command(store: StoreOption = None) -> None:
    """Give unasserted topics and relations their origin's provenance (safe to run again)."""
    from services.extractor.backfill import backfill_provenance

    report = run_on_store(store_url(store), backfill_provenance)
    console = Console(highlight=False, soft_wrap=True, markup=False)
    if not (report.topics or report.relations or report.unattributed_topics):
        console.print("provenance: nothing to backfill (every topic and relation has a source)")
        return
    by = ", ".join(f"{n} by {a}" for a, n in sorted(report.by_asserter.items()))
    console.print(f"provenance: backfilled {report.topics} topic(s) and {report.relations} "
                  f"relation(s){f' ({by})' if by else ''}")  # fmt: skip
    if report.unattributed_topics:
        shown = ", ".join(report.unattributed_topics[:10])
        more = " …" if len(report.unattributed_topics) > 10 else ""
        console.print(f"no origin recorded for {len(report.unattributed_topics)} topic(s) "
                      f"({shown}{more}) and {report.unattributed_relations} relation(s); "
                      "they stay until an admin deletes them")  # fmt: skip


def register(app: typer.Typer) -> None:
    """Register the kb commands on the root app."""
    from services.cli import kb_pending, kb_topic  # they import this module's helpers

    kb = typer.Typer(
        name="kb",
        help="Import, export and inspect the knowledge graph in the store.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
    )
    kb.command("import")(import_command)
    kb.command("export")(export_command)
    kb.command("stats")(stats_command)
    kb.command("backfill-provenance")(backfill_command)
    kb.command("pending")(kb_pending.pending_command)
    kb_topic.register(kb)
    app.add_typer(kb, name="kb")
