"""CLI: `r42 learn …` and `r42 content stale|regenerate`, in-process on the configured store.

Command tree: `learn` is a group whose default command is `show`, so `r42 learn TOPIC`
and `r42 learn show TOPIC` are the same, and `r42 learn refine TOPIC "…"` / `r42 learn
week` are subcommands (a topic literally named show, refine or week needs `learn show`).
The LLM provider comes from the settings (offline without ANTHROPIC_API_KEY); no running
stack is needed. LLM call records are saved to the store's llm_calls, as services do.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table
from rich.text import Text
from typer.core import TyperGroup

from services.cli.kb import StoreOption, fail
from services.content.generate import KINDS, ensure_content, kinds_of, part_of, part_png
from services.content.offline import offline_plans
from services.content.refine import refine_article
from services.content.render import render_infographic_png
from services.content.stale import find_stale, regenerate
from services.content.topics import find_topic, resolve_or_create
from shared.config import build_settings
from shared.errors import R42Error
from shared.kb.weekly import iso_week
from shared.llm import MemorySink, configure_llm, reset_llm
from shared.store import Content, Store, describe_validation, open_store

T = TypeVar("T")
TYPES = ("article", "slides", "infographic", "all")


class _LearnGroup(TyperGroup):
    """A group whose first argument, when it is not a subcommand, goes to `show`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["show", *args]
        return super().parse_args(ctx, args)


def _run[T](store_option: str | None, action: Callable[[Store], Awaitable[T]]) -> T:
    """Configure the LLM, open the store, run the action; R42 errors exit 1 with a message."""
    try:
        settings = build_settings(**({"store": store_option} if store_option else {}))
    except ValidationError as exc:
        fail(f"invalid settings: {describe_validation(exc)}")

    async def main() -> T:
        sink = MemorySink()
        runtime = configure_llm(settings, sink=sink, offline_plans=offline_plans())
        store = await open_store(settings.store_url)
        try:
            return await action(store)
        finally:
            for record in sink.records:  # ops costs include CLI calls; never fail for it
                with contextlib.suppress(Exception):
                    await store.llm_calls.add(record)
            await store.close()
            await runtime.aclose()
            reset_llm()

    try:
        return asyncio.run(main())
    except R42Error as exc:
        fail(str(exc))


def _public_part(part: dict[str, Any]) -> dict[str, Any]:
    shown = dict(part)
    if "image" in shown:  # the picture goes to --png, not into JSON on a terminal
        shown["image"] = {k: v for k, v in shown["image"].items() if k != "base64"}
    return shown


def _print_part(console: Console, kind: str, part: dict[str, Any]) -> None:
    meta = part.get("meta") or {}
    tag = " (offline)" if meta.get("offline") else ""
    if kind == "article":
        lines = [f"# {part['title']}{tag}", "", part["intro"], ""]
        for section in part["sections"]:
            lines += [f"## {section['heading']}", "", section["body"], ""]
        lines += ["**Kernpunten**", ""] + [f"- {t}" for t in part["key_takeaways"]]
        console.print(Markdown("\n".join(lines)))
    elif kind == "slides":
        console.print(Text(f"Slides: {part['title']}{tag}", style="bold"))
        for n, slide in enumerate(part["slides"], start=1):
            console.print(Text(f"\n[{n}] {slide['title']}", style="bold"))
            for bullet in slide["bullets"]:
                console.print(Text(f"  • {bullet}"))
            console.print(Text(f"  notitie: {slide['speaker_note']}", style="dim"))
    else:
        console.print(Text(f"Infographic ({part['theme']}){tag}", style="bold"))
        console.print(Text(f"{part['headline']}\n{part['tagline']}"))
        for stat in part["stats"]:
            console.print(Text(f"  {stat['value']:>8}  {stat['label']}"))
        for step in part["steps"]:
            console.print(Text(f"  {step['number']}. {step['text']}"))
        console.print(Text(f"  “{part['quote']}”", style="italic"))
    console.print()


def show_command(
    topic: Annotated[str, typer.Argument(help="Topic id, label, or what you want to learn about.")],
    type_: Annotated[str, typer.Option("--type", "-t", help="article|slides|infographic|all")] = (
        "all"
    ),
    force: Annotated[bool, typer.Option("--force", help="Regenerate even if cached.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the stored JSON.")] = False,
    png: Annotated[
        Path | None, typer.Option("--png", help="Also write the infographic picture to FILE.")
    ] = None,
    user: Annotated[str, typer.Option("--as", help="Who asks (for custom topics).")] = "cli",
    store: StoreOption = None,
) -> None:
    """Show (generating if missing or stale) the micro-learning of a topic."""
    if type_ not in TYPES:
        fail(f"--type must be one of {', '.join(TYPES)}, not {type_!r}", code=2)
    if png is not None and not png.parent.is_dir():
        fail(f"cannot write {png}: directory {png.parent} does not exist", code=2)

    async def action(s: Store) -> tuple[Any, Content | None, tuple[str, ...]]:
        found = await resolve_or_create(s, ref=topic, requested_by=user)
        outcome = await ensure_content(s, topic=found, content_type=type_, force=force)
        generated = outcome.generated
        if png is not None and type_ not in ("infographic", "all"):
            extra = await ensure_content(s, topic=found, content_type="infographic", force=force)
            generated += extra.generated
        return found, await s.content.get(found.id), generated

    found, content, generated = _run(store, action)
    kinds = kinds_of(type_)
    if png is not None:
        infographic = part_of(content, "infographic")
        if infographic is None:
            fail(f"no infographic of {found.label} was stored; try again with --force")
        picture = part_png(content) or render_infographic_png(infographic)
        write_atomically_bytes(png, picture)
    if as_json:
        doc = {
            "topic": {"id": found.id, "label": found.label, "custom": found.custom},
            "generated": list(generated),
            **{k: _public_part(part_of(content, k) or {}) for k in kinds},
        }
        typer.echo(json.dumps(doc, ensure_ascii=False, indent=2))
        return
    console = Console(highlight=False, soft_wrap=True)
    state = f"generated: {', '.join(generated)}" if generated else "from cache"
    custom = ", custom topic (pending admin approval into the KG)" if found.custom else ""
    console.print(Text(f"{found.label} [{found.id}] — {state}{custom}", style="dim"))
    for kind in kinds:
        _print_part(console, kind, part_of(content, kind) or {})
    if png is not None:
        console.print(Text(f"infographic picture written to {png}", style="dim"))


def write_atomically_bytes(path: Path, data: bytes) -> None:
    """Write bytes via a temp file and rename (the text helper, for binary content)."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        tmp.write_bytes(data)
        tmp.replace(path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        fail(f"cannot write {path}: {exc.strerror}")


def refine_command(
    topic: Annotated[str, typer.Argument(help="Topic id or label.")],
    instruction: Annotated[str, typer.Argument(help="How the article should change.")],
    admin: Annotated[str, typer.Option("--as", help="The admin asking.")] = "cli-admin",
    store: StoreOption = None,
) -> None:
    """Refine a topic's article with patch operations (admin)."""
    done = _run(
        store, lambda s: refine_article(s, topic_ref=topic, instruction=instruction, admin=admin)
    )
    console = Console(highlight=False, soft_wrap=True)
    tag = " (offline)" if done.offline else ""
    console.print(Text(f"applied: {', '.join(done.applied)}{tag}", style="dim"))
    _print_part(console, "article", done.article.model_dump(mode="json"))


def week_command(
    user: Annotated[str, typer.Option("--user", help="The user id.")] = "cli",
    week: Annotated[
        str | None, typer.Option("--week", help="ISO week YYYY-Www (default: this week).")
    ] = None,
    store: StoreOption = None,
) -> None:
    """Print the weekly topic of a user (the curriculum, else a stable weighted pick)."""
    from services.quiz.week import WeekTopic, week_topic

    when = week or iso_week(datetime.now(UTC).date())

    async def action(s: Store) -> WeekTopic:
        return await week_topic(store=s, user_id=user, week=when)  # the quiz service's rule

    found = _run(store, action).topic
    if found is None:
        fail(f"no eligible topic for {when}: the knowledge graph has no non-excluded topics")
    typer.echo(f"{when} {user}: {found.label} [{found.id}]")


def stale_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    store: StoreOption = None,
) -> None:
    """List stale content: older prompt version, changed or removed topic."""
    items = _run(store, find_stale)
    if as_json:
        rows = [
            {"topic_id": i.topic_id, "kind": i.kind, "reasons": list(i.reasons),
             "refined": i.refined}
            for i in items
        ]  # fmt: skip
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    if not items:
        typer.echo("no stale content")
        return
    table = Table(title=f"{len(items)} stale part(s)", title_justify="left")
    for column in ("topic", "part", "why", "refined"):
        table.add_column(column, overflow="fold")
    for item in items:
        table.add_row(
            Text(item.topic_id), item.kind, Text("; ".join(item.reasons)),
            "yes (regenerating drops the edits)" if item.refined else "",
        )  # fmt: skip
    Console(highlight=False).print(table)


def regenerate_command(
    topics: Annotated[list[str] | None, typer.Argument(help="Topic ids or labels.")] = None,
    stale: Annotated[bool, typer.Option("--stale", help="Only the stale parts.")] = False,
    store: StoreOption = None,
) -> None:
    """Regenerate the stale parts (--stale) or all stored parts of the given topics."""
    refs = list(topics or [])
    if not refs and not stale:
        fail("give one or more TOPICs, or --stale to regenerate every stale part", code=2)

    async def action(s: Store) -> list[Any]:
        ids = []
        for ref in refs:
            found = await find_topic(s, ref)
            if found is None:
                raise R42Error(f"no topic {ref!r} in the knowledge graph or custom topics")
            ids.append(found.id)
        return await regenerate(s, topic_ids=ids, stale_only=stale)

    results = _run(store, action)
    if not results:
        typer.echo("nothing to regenerate")
        return
    failed = 0
    for result in results:
        if result.error:
            failed += 1
            typer.echo(f"{result.topic_id}: failed: {result.error}", err=True)
        else:
            typer.echo(f"{result.topic_id}: regenerated {', '.join(result.kinds) or 'nothing'}")
    if failed:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Register the learn and content command groups on the root app."""
    learn = typer.Typer(
        name="learn", cls=_LearnGroup, no_args_is_help=True, pretty_exceptions_enable=False,
        help="Weekly micro-learning: `r42 learn TOPIC`, `learn refine TOPIC TEXT`, `learn week`.",
    )  # fmt: skip
    learn.command("show")(show_command)
    learn.command("refine")(refine_command)
    learn.command("week")(week_command)
    app.add_typer(learn, name="learn")
    content = typer.Typer(
        name="content", no_args_is_help=True, pretty_exceptions_enable=False,
        help=f"Generated learning content ({', '.join(KINDS)}): stale listing, regeneration.",
    )  # fmt: skip
    content.command("stale")(stale_command)
    content.command("regenerate")(regenerate_command)
    app.add_typer(content, name="content")
