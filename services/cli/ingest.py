"""CLI: `r42 ingest`, `r42 sources [show|cancel|delete ID]`, `r42 sync-handbook`.

With a running stack (NATS_URL, or the `r42 up` recorded in the data dir) `ingest`
uploads like any client: each file into the r42-sources object store, then source.uploaded
naming it; without a stack it runs the extractor's pipeline in this process on the data
dir's store. The admin command
`sync-handbook` always runs here and publishes kb.updated when a stack runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import getpass
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table
from rich.text import Text

from services.cli.ingest_resume import (
    ingest_leases,
    resume_event,
    unfinished_source,
    upload_event,
)
from services.cli.sync_words import waiting_words
from services.extractor.handbook import FileOutcome, github_client, sync_handbook
from services.extractor.lifecycle import delete_source
from services.extractor.local import follow_sources, ingest_locally
from services.extractor.outcomes import mark_cancelled, read_progress
from services.extractor.session import (
    AdminSession,
    admin_session,
    extract_options,
    live_nats_url,
)
from services.extractor.uploads import (
    completed_duplicate,
    load_file,
    new_source_id,
    normalise_text,
    register_upload,
    sha256_text,
)
from shared.bus import (
    Event,
    SourceCancelled,
    SourceCompleted,
    SourceFailed,
    SourceProgress,
    SourceUploaded,
)
from shared.bus.objects import put_source_object
from shared.config import Settings, build_settings
from shared.errors import BadInputError, R42Error
from shared.formats import EmptyDocumentError, is_supported, supported_list, unsupported
from shared.store import describe_validation

T = TypeVar("T")
ENDED = {"completed", "failed", "cancelled"}


def fail(message: str, *, code: int = 1) -> NoReturn:
    """Print an error to stderr and exit."""
    Console(stderr=True, highlight=False, soft_wrap=True).print(Text(f"error: {message}", "red"))
    raise typer.Exit(code)


def load_settings() -> Settings:
    """Settings from the environment, or a clean error."""
    try:
        return build_settings()
    except ValidationError as exc:
        fail(f"invalid settings: {describe_validation(exc)}", code=2)


def run[T](main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine; R42 errors become a clean message and exit code 1."""
    try:
        return asyncio.run(main())
    except R42Error as exc:
        fail(str(exc))


# -- ingest --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A file to ingest and the source name it gets (its path inside the ingested folder)."""

    path: Path
    name: str
    from_dir: bool


def expand_paths(paths: list[Path]) -> tuple[list[Candidate], list[str]]:
    """Files as given; a directory stands for every supported file in it (recursively).

    Returns the candidates and the notices of files a directory holds but R42 cannot read
    (skipped, not a failure). Hidden folders (.git, .github…) are not looked into.
    """
    out: dict[Path, Candidate] = {}
    skipped: list[str] = []
    for path in paths:
        if not path.is_dir():
            out.setdefault(path, Candidate(path, path.name, from_dir=False))
            continue
        found = 0
        for child in sorted(path.rglob("*")):
            relative = child.relative_to(path)
            if any(part.startswith(".") for part in relative.parts) or not child.is_file():
                continue
            if not is_supported(child.name):
                skipped.append(f"{child}: {unsupported(child.name)}")
                continue
            found += 1
            out.setdefault(child, Candidate(child, relative.as_posix(), from_dir=True))
        if not found:
            fail(f"{path}: no {supported_list()} files in this directory", code=2)
    return list(out.values()), skipped


@dataclass(frozen=True)
class Loaded:
    """A checked file: its source name, its text, and the bytes an uploader sends."""

    name: str
    text: str
    data: bytes


def load_files(paths: list[Path], *, max_bytes: int) -> list[Loaded]:
    """Read and check every file first: one unreadable file means nothing is stored.

    Inside a directory, empty files and unsupported formats are skipped with a notice; a
    file named on its own that R42 cannot read is refused (exit 2, one line).
    """
    candidates, skipped = expand_paths(paths)
    loaded: list[Loaded] = []
    problems: list[str] = []
    for candidate in candidates:
        try:
            data, document = load_file(candidate.path, max_bytes=max_bytes,
                                       name=str(candidate.path))  # fmt: skip
        except EmptyDocumentError as exc:
            # An empty file in a folder is skipped; a file named on its own is refused.
            (skipped if candidate.from_dir else problems).append(str(exc))
            continue
        except BadInputError as exc:
            problems.append(str(exc))
            continue
        skipped.extend(f"warning: {w}" for w in document.warnings)
        loaded.append(Loaded(candidate.name, document.text, data))
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    for notice in skipped:
        err.print(Text(notice if notice.startswith("warning") else f"skipped {notice}", "yellow"))
    if len(problems) == 1 and len(candidates) == 1:
        fail(f"{problems[0]}; nothing was ingested", code=2)
    if problems:
        for problem in problems:
            err.print(Text(f"error: {problem}", "red"))
        files = f"{len(problems)} file{'s' if len(problems) > 1 else ''}"
        fail(f"nothing was ingested: {files} refused", code=2)
    if not loaded:
        fail("nothing to ingest: every file was skipped", code=2)
    return loaded


class SourceBars:
    """One progress bar per source, fed with source.* events; knows when all ended."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.tasks: dict[str, Any] = {}
        self.outcome: dict[str, str] = {}
        self.ended = asyncio.Event()

    def add(self, source_id: str, label: str) -> None:
        """Track a source."""
        self.tasks[source_id] = self.progress.add_task(label, total=None, status="queued")

    def on_event(self, event: Event) -> None:
        """Move the bar of the event's source."""
        source_id = getattr(event, "source_id", "")
        task = self.tasks.get(source_id)
        if task is None or source_id in self.outcome:
            return
        if isinstance(event, SourceProgress):  # and SourceCompleted, its subclass
            status = f"+{event.topics_added} new, {event.topics_updated} updated"
            self.progress.update(task, completed=event.chunks_done,
                                 total=max(event.chunks_total, 1), status=status)  # fmt: skip
        if isinstance(event, SourceCompleted):
            self._end(source_id, "completed")
        elif isinstance(event, SourceFailed):
            self.progress.update(task, status=f"[red]failed: {event.error}")
            self._end(source_id, "failed")
        elif isinstance(event, SourceCancelled):
            self.progress.update(task, status="[yellow]cancelled")
            self._end(source_id, "cancelled")

    def _end(self, source_id: str, outcome: str) -> None:
        self.outcome[source_id] = outcome
        if len(self.outcome) == len(self.tasks):
            self.ended.set()


def new_progress(console: Console) -> Progress:
    """The progress display: name, bar, chunks done/total, status."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("chunks {task.fields[status]}"), console=console)  # fmt: skip


async def _until_ended(session: AdminSession, bars: SourceBars) -> None:
    """Until every source ended: by its events, or by the store when events were missed.

    Events sent while `r42 up` restarts (or NATS is down) never reach this core
    subscription; the store has the outcome either way.
    """
    ended = asyncio.create_task(bars.ended.wait())
    try:
        while not ended.done():
            await asyncio.wait({ended}, timeout=STORE_POLL_S)
            if ended.done():
                return
            sources = [await session.store.sources.get(sid) for sid in bars.tasks]
            if all(s is not None and s.status in ("completed", "failed", "cancelled")
                   for s in sources):  # fmt: skip
                return
    finally:
        ended.cancel()


STORE_POLL_S = 2.0


async def _via_stack(
    session: AdminSession, bars: SourceBars, uploads: list[tuple[SourceUploaded, bytes]], *,
    wait: bool, wait_s: float | None, console: Console,
) -> bool:  # fmt: skip
    """Upload each file as any client does (r42-sources, then source.uploaded); False on timeout.

    The extractor registers the source from the object: this process writes nothing to the
    store while a stack runs.
    """
    assert session.publish is not None
    if not bars.tasks:  # every file was skipped: nothing will report, nothing to wait for
        return True
    subs = []
    if wait:  # subscribed before publishing, so no progress event is missed
        subs = await follow_sources(
            session.connection,
            source_ids=set(bars.tasks),
            observer=bars.on_event,
            namespace=session.namespace,
        )
    try:
        for event, data in uploads:
            await put_source_object(session.connection, event.text_ref, data)
            await session.publish(event)
            if not wait:
                console.print(
                    f"queued {event.name} as source {event.source_id}; follow it with "
                    f"`r42 sources show {event.source_id}` (or ingest with --wait)"
                )
        if not wait:
            return True
        with bars.progress:
            try:
                await asyncio.wait_for(_until_ended(session, bars), wait_s)
            except TimeoutError:
                console.print("still running; see `r42 sources` for progress")
                return False
        return True
    finally:
        for sub in subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()


async def ingest_files(
    settings: Settings, files: list[Loaded], *, wait: bool, wait_s: float | None
) -> int:
    """Upload every file to the running extractor, or register and extract them here."""
    console = Console(highlight=False, soft_wrap=True)
    who = f"cli:{getpass.getuser() or 'unknown'}"
    async with admin_session(settings, llm=live_nats_url(settings) is None) as session:
        bars = SourceBars(new_progress(console))
        uploads: list[tuple[SourceUploaded, bytes]] = []
        for file in files:
            name, text = file.name, file.text
            interrupted = await unfinished_source(session.store, name=name, text=text)
            if interrupted is not None:
                # A killed earlier ingest: continue it from its merge marks, same source id.
                console.print(f"resuming {name} as source {interrupted.id} (interrupted)")
                bars.add(interrupted.id, name)
                uploads.append((resume_event(interrupted, file.data, actor="cli"), file.data))
                continue
            digest = sha256_text(normalise_text(text))
            duplicate = await completed_duplicate(session.store, name=name, sha256=digest)
            if duplicate is not None:
                console.print(f"skipped {name}: already ingested as source {duplicate.id}")
            elif session.publish is not None:
                event = upload_event(source_id=new_source_id(), name=name, data=file.data,
                                     uploaded_by=who, actor="cli")  # fmt: skip
                bars.add(event.source_id, name)
                uploads.append((event, file.data))
            else:
                reg = await register_upload(session.store, name=name, text=text,
                                            uploaded_by=who, actor="cli")  # fmt: skip
                if reg.source is not None:
                    bars.add(reg.source.id, name)
        if session.publish is not None:
            finished = await _via_stack(session, bars, uploads, wait=wait, wait_s=wait_s,
                                        console=console)  # fmt: skip
            if not (finished and wait):
                return 0 if finished else 1
        elif bars.tasks:
            # Leased while this process works on them: a rerun after a kill can tell.
            async with ingest_leases(session.store.locks, list(bars.tasks)):
                with bars.progress:
                    await ingest_locally(store=session.store, source_ids=list(bars.tasks),
                                         limiter=session.limiter, options=extract_options(),
                                         observer=bars.on_event)  # fmt: skip
        ended = [await session.store.sources.get(source_id) for source_id in bars.tasks]
    failed = [s for s in ended if s is None or s.status != "completed"]
    for source in failed:
        if source is not None:
            console.print(Text(f"{source.name}: {source.status} {source.error or ''}", "red"))
    return 1 if failed else 0


def ingest_command(
    paths: Annotated[list[Path], typer.Argument(help="Markdown or text files (or directories).")],
    wait: Annotated[
        bool, typer.Option("--wait", help="With a running stack: follow progress until done.")
    ] = False,
    timeout: Annotated[
        float | None, typer.Option("--timeout", help="Stop waiting after SECONDS.")
    ] = None,
) -> None:
    """Extract documents into the knowledge graph (via the running stack, or right here)."""
    settings = load_settings()
    files = load_files(paths, max_bytes=settings.max_upload_bytes)
    code = run(lambda: ingest_files(settings, files, wait=wait, wait_s=timeout))
    raise typer.Exit(code)


# -- sources -------------------------------------------------------------------------------


async def _sources_table(settings: Settings, limit: int, *, width: int) -> Table:
    """One line per source, fitting `width`: long names and errors end in an ellipsis."""
    async with admin_session(settings) as session:
        sources = await session.store.sources.list(limit=limit)
    rows = [
        (s.id, s.name, s.status,
         f"{s.chunks_done}/{'?' if s.chunks_total is None else s.chunks_total}",
         f"{s.updated_at:%m-%d %H:%M}" if s.updated_at else "",
         " ".join((s.error or "").split()))
        for s in sources
    ]  # fmt: skip
    headers = ("id", "name", "status", "chunks", "updated", "error")
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    # Columns are two spaces apart; name and error share what the fixed columns leave.
    free = width - sum(widths[i] for i in (0, 2, 3, 4)) - 2 * (len(headers) - 1)
    name_width = max(min(widths[1], 28, free - min(widths[5], free // 2)), 8)
    table = Table(title="Sources", title_justify="left", caption_justify="left", box=None,
                  pad_edge=False, header_style="bold underline")  # fmt: skip
    limits = {1: name_width, 5: max(free - name_width, 8)}
    for i, header in enumerate(headers):
        table.add_column(header, no_wrap=True, overflow="ellipsis", max_width=limits.get(i))
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    if any(row[5] for row in rows):
        table.caption = "the whole error: r42 sources show ID"
    return table


async def _show_source(settings: Settings, source_id: str) -> Table:
    async with admin_session(settings) as session:
        source = await session.store.sources.get(source_id)
        if source is None:
            raise BadInputError(f"no source {source_id!r} (see `r42 sources`)")
        counts = await read_progress(session.store, source_id)
    table = Table(show_header=False, box=None)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    total = "?" if source.chunks_total is None else source.chunks_total
    for key, value in (
        ("id", source.id), ("name", source.name), ("status", source.status),
        ("chunks", f"{source.chunks_done}/{total}"),
        ("topics", f"{counts['topics_added']} added, {counts['topics_updated']} updated"),
        ("by", source.who or ""), ("created", f"{source.created_at or ''}"),
        ("updated", f"{source.updated_at or ''}"), ("sha256", source.sha256),
        ("error", source.error or ""),
    ):  # fmt: skip
        table.add_row(key, Text(value))
    return table


async def _cancel(settings: Settings, source_id: str) -> str:
    async with admin_session(settings) as session:
        store = session.store
        source = await store.sources.get(source_id)
        if source is None:
            raise BadInputError(f"no source {source_id!r} (see `r42 sources`)")
        if source.status in ENDED:
            return f"source {source_id} is {source.status}; nothing to cancel"
        publish = session.publish
        if publish is not None:
            # Every extractor replica hears this and stops the source at once.
            await publish(SourceCancelled(source_id=source_id, actor="cli"))

        async def ignore(event: Event) -> None:
            del event

        await mark_cancelled(store, source_id, publish or ignore)
        return f"source {source_id} cancelled"


# -- handbook and graph --------------------------------------------------------------------


async def _sync(settings: Settings, console: Console) -> int:
    github_client(settings)  # a missing repository setting fails before anything opens
    async with admin_session(settings, llm=True) as session:

        def show(outcome: FileOutcome) -> None:
            console.print(sync_line(outcome))

        report = await sync_handbook(store=session.store, settings=settings,
                                     limiter=session.limiter, options=extract_options(),
                                     publish=session.publish, on_file=show)  # fmt: skip
    counts = ", ".join(f"{report.count(s)} {w}" for s, w in _SYNC_WORDS if report.count(s))
    console.print(f"handbook: {counts or 'nothing to do'} "
                  f"({report.github_requests} GitHub request(s))")  # fmt: skip
    if report.rate_limited:
        console.print(Text(f"stopped: {report.rate_limited}; sync again after that", "red"))
    if report.waiting is not None and (line := waiting_words(report.waiting.summary())):
        console.print(Text(f"{line} (see `r42 kb pending`)", "yellow"))
    return 1 if report.count("failed") or report.rate_limited else 0


_SYNC_WORDS = (("changed", "synced"), ("unchanged", "unchanged"), ("renamed", "renamed"),
               ("deleted", "deleted"), ("skipped", "skipped"), ("failed", "failed"),
               ("not_tried", "not tried"), ("held", "held for review"))  # fmt: skip


def sync_line(outcome: FileOutcome) -> Text:
    """One line of `r42 sync-handbook` output."""
    path = outcome.path
    if outcome.status == "failed":
        return Text(f"  failed    {path}: {outcome.error}", "red")
    if outcome.status == "changed":
        removed = f", {len(outcome.removed_ids)} removed" if outcome.removed_ids else ""
        return Text(f"  synced    {path}: +{outcome.topics_added} new, "
                    f"{outcome.topics_updated} updated topic(s){removed}")  # fmt: skip
    if outcome.status == "deleted":
        return Text(f"  deleted   {path}: {len(outcome.removed_ids)} topic(s) removed", "yellow")
    if outcome.status == "renamed":
        return Text(f"  renamed   {outcome.renamed_from} → {path}")
    if outcome.status == "skipped":
        return Text(f"  skipped   {path}: {outcome.error}", "yellow")
    if outcome.status == "held":
        return Text(f"  held      {path}: {outcome.error}", "yellow")
    if outcome.status == "not_tried":
        return Text(f"  not tried {path}", "yellow")
    return Text(f"  unchanged {path}")


async def _delete(settings: Settings, source_id: str, max_deletions: int | None) -> str:
    async with admin_session(settings) as session:
        removed, undo_id = await delete_source(store=session.store, source_id=source_id,
                                               publish=session.publish,
                                               max_deletions=max_deletions)  # fmt: skip
    return (f"source {source_id} deleted: {len(removed)} topic(s) removed"
            f"{' (' + ', '.join(removed[:10]) + ')' if removed else ''}; "
            f"undo with `r42 graph undo {undo_id}`")  # fmt: skip


def register(app: typer.Typer) -> None:
    """Register ingest, sources and sync-handbook on the root app (graph: services/cli/graph.py)."""
    app.command("ingest")(ingest_command)
    sources = typer.Typer(help="Sources under extraction.", pretty_exceptions_enable=False)
    app.add_typer(sources, name="sources")

    @sources.callback(invoke_without_command=True)
    def list_sources(
        ctx: typer.Context,
        limit: Annotated[int, typer.Option("--limit", min=1, help="Newest N sources.")] = 50,
    ) -> None:
        """Show sources and their extraction status (newest first)."""
        if ctx.invoked_subcommand is None:
            settings = load_settings()
            console = Console(highlight=False)
            console.print(run(lambda: _sources_table(settings, limit, width=console.width)))

    @sources.command("show")
    def show(source_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
        """Everything about one source, its whole error included."""
        settings = load_settings()
        Console(highlight=False).print(run(lambda: _show_source(settings, source_id)))

    @sources.command("cancel")
    def cancel(source_id: Annotated[str, typer.Argument(metavar="ID")]) -> None:
        """Stop extracting a source (within one LLM call)."""
        settings = load_settings()
        Console(highlight=False, soft_wrap=True).print(run(lambda: _cancel(settings, source_id)))

    @sources.command("delete")
    def delete(
        source_id: Annotated[str, typer.Argument(metavar="ID")],
        max_deletions: Annotated[int | None, typer.Option(
            "--max-deletions", min=0, help="Raise the bound on topics removed at once.")] = None,
    ) -> None:  # fmt: skip
        """Delete a source: what only it asserted leaves the graph (undoable)."""
        settings = load_settings()
        message = run(lambda: _delete(settings, source_id, max_deletions))
        Console(highlight=False, soft_wrap=True).print(message)

    @app.command("sync-handbook")
    def sync_command() -> None:
        """Extract the GitHub handbook's changed files (R42_HANDBOOK_OWNER/REPO/PATH/BRANCH)."""
        settings = load_settings()
        raise typer.Exit(run(lambda: _sync(settings, Console(highlight=False, soft_wrap=True))))
