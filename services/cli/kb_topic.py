"""CLI: `r42 kb topic show|edit|delete|merge|relate|unrelate` — admin topic actions.

Every change goes through the KG owner: over the bus (`rpc.extractor.topic`) when a stack
runs, else the extractor's own code in-process; either way the owner checks the actor
against its admin list and audits the attempt. The CLI acts as `--as USER` (default
`console-<login>`, an admin only in the embedded runtime; elsewhere pass an id from
R42_ADMINS).
"""

from __future__ import annotations

import asyncio
import getpass
import json
import re
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from services.cli.kb import StoreOption, fail
from shared.bus import request as rpc_request
from shared.bus.topic_rpc import (
    TOPIC_ACTION_SUBJECT,
    TOPIC_CARD_SUBJECT,
    RelationSpec,
    TopicAction,
    TopicCard,
    TopicCardReply,
    TopicCardRequest,
    TopicEdit,
    TopicReply,
)
from shared.config import build_settings
from shared.errors import R42Error
from shared.identity import CONSOLE_PREFIX
from shared.store import LEARNING_RELEVANCES, RELATION_TYPES, TOPIC_TYPES, describe_validation

RPC_TIMEOUT_S = 30.0

AsOption = Annotated[
    str | None,
    typer.Option("--as", help="Act as this user id (default console-<login>).", show_default=False),
]


def default_actor() -> str:
    """console-<login>: an admin in the embedded runtime only (the owner decides)."""
    login = re.sub(r"[^a-z0-9_-]+", "-", getpass.getuser().lower()).strip("-") or "operator"
    return f"{CONSOLE_PREFIX}{login}"


async def _call(request: TopicAction | TopicCardRequest, store_option: str | None) -> Any:
    """Through the KG owner: the running stack's rpc, else its code on the store here."""
    from services.extractor.admins import is_graph_admin
    from services.extractor.session import admin_session
    from services.extractor.topic_cards import topic_card
    from services.extractor.topic_edits import answer_topic_action

    settings = build_settings(**({"store": store_option} if store_option else {}))
    async with admin_session(settings) as session:
        if session.broker is not None and store_option is None:
            subject, model = (
                (TOPIC_ACTION_SUBJECT, TopicReply)
                if isinstance(request, TopicAction)
                else (TOPIC_CARD_SUBJECT, TopicCardReply)
            )
            return await rpc_request(
                session.broker, subject, request, response_model=model,
                timeout=RPC_TIMEOUT_S, namespace=session.namespace,
            )  # fmt: skip
        if isinstance(request, TopicCardRequest):
            return await topic_card(store=session.store, settings=settings, query=request.query)
        return await answer_topic_action(
            request, store=session.store, publish=None,
            is_admin=lambda user: is_graph_admin(user, settings),
        )  # fmt: skip


def _run(request: TopicAction | TopicCardRequest, store: str | None) -> Any:
    try:
        return asyncio.run(_call(request, store))
    except R42Error as exc:
        fail(str(exc))


def _action(**fields: Any) -> TopicAction:
    try:
        return TopicAction.model_validate({"surface": "cli", **fields})
    except ValidationError as exc:
        fail(describe_validation(exc))


def _report(reply: TopicReply, *, done: str) -> None:
    """One line for the outcome; anything but done/unchanged exits 1."""
    if reply.outcome == "refused":
        fail(f"refused: {reply.detail} (see R42_ADMINS; the attempt is audited)")
    if reply.outcome in ("not_found", "invalid"):
        fail(reply.detail)
    if reply.outcome == "unchanged":
        typer.echo(f"unchanged: {reply.detail}")
        return
    undo = f"; undo with `r42 graph undo {reply.undo_batch}`" if reply.undo_batch else ""
    typer.echo(f"{done}{undo}")


def card_lines(card: TopicCard) -> list[str]:
    """The card as plain lines (English, for a terminal)."""
    t = card.topic
    lock = " (locked)" if t.relevance_locked else ""
    lines = [f"{t.label}  [{t.id}]", f"type: {t.type}", f"relevance: {t.learning_relevance}{lock}"]
    if card.curated:
        lines.append(f"set by an admin: {', '.join(card.curated)}")
    lines.append(f"description: {t.description or '-'}")
    lines.append("sources:" if card.sources else "sources: none")
    lines += [f"  - {s.name}" + (f"  {s.url}" if s.url else "") for s in card.sources]
    lines.append("relations:" if card.relations else "relations: none")
    for r in card.relations:
        arrow = f"-{r.type}-> {r.label} [{r.topic_id}]" if r.outgoing else (
            f"<-{r.type}- {r.label} [{r.topic_id}]")  # fmt: skip
        lines.append(f"  {arrow}")
    return lines


def show_command(
    topic: Annotated[str, typer.Argument(help="Topic id or label.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the card as JSON.")] = False,
    store: StoreOption = None,
) -> None:
    """Show a topic: type, relevance and lock, description, sources, relations."""
    try:
        request = TopicCardRequest(query=topic)
    except ValueError:
        fail("name a topic id or label (at most 300 characters)")
    reply: TopicCardReply = _run(request, store)
    if reply.card is None:
        fail(f"no topic matches {topic!r}")
    if as_json:
        typer.echo(json.dumps(reply.card.model_dump(mode="json"), ensure_ascii=False, indent=2))
        return
    typer.echo("\n".join(card_lines(reply.card)))


def edit_command(
    topic_id: Annotated[str, typer.Argument(help="Topic id.")],
    label: Annotated[str | None, typer.Option(help="New label.", show_default=False)] = None,
    type_: Annotated[
        str | None,
        typer.Option("--type", help=f"One of {', '.join(TOPIC_TYPES)}.", show_default=False),
    ] = None,
    description: Annotated[
        str | None, typer.Option(help="New description.", show_default=False)
    ] = None,
    relevance: Annotated[
        str | None,
        typer.Option(help=f"One of {', '.join(LEARNING_RELEVANCES)}.", show_default=False),
    ] = None,
    lock: Annotated[
        bool | None,
        typer.Option(
            "--lock/--unlock",
            help="Lock the relevance (extraction keeps it) or not.",
            show_default=False,
        ),
    ] = None,
    actor: AsOption = None,
    store: StoreOption = None,
) -> None:
    """Edit a topic's label, type, description or relevance, and lock or unlock it."""
    fields = {"label": label, "type": type_, "description": description,
              "learning_relevance": relevance, "lock": lock}  # fmt: skip
    if all(v is None for v in fields.values()):
        fail("nothing to change: give --label, --type, --description, --relevance, --lock/--unlock")
    try:
        edit = TopicEdit.model_validate(fields)
    except ValidationError as exc:
        fail(describe_validation(exc))
    request = _action(actor=actor or default_actor(), action="edit", topic_id=topic_id, edit=edit)
    reply: TopicReply = _run(request, store)
    before = reply.before or {}
    changes = ", ".join(f"{k}: {before.get(k)!r} -> {v!r}" for k, v in (reply.after or {}).items())
    _report(reply, done=f"edited {topic_id} ({changes})")


def delete_command(
    topic_id: Annotated[str, typer.Argument(help="Topic id.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    actor: AsOption = None,
    store: StoreOption = None,
) -> None:
    """Delete a topic with its relations (its content and quiz bank go with it)."""
    request = _action(actor=actor or default_actor(), action="delete", topic_id=topic_id)
    if not yes:
        typer.confirm(f"delete {topic_id} with its relations, content and quiz bank?", abort=True)
    reply: TopicReply = _run(request, store)
    _report(reply, done=f"deleted {topic_id} and {reply.removed_relations} relation(s)")


def merge_command(
    topic_id: Annotated[str, typer.Argument(help="The topic that goes.")],
    into: Annotated[str, typer.Option("--into", help="The topic that stays.")],
    actor: AsOption = None,
    store: StoreOption = None,
) -> None:
    """Merge a topic into another: its relations move, the topic goes."""
    request = _action(actor=actor or default_actor(), action="merge", topic_id=topic_id, into=into)
    reply: TopicReply = _run(request, store)
    moved = (reply.after or {}).get("relations_moved", 0)
    _report(reply, done=f"merged {topic_id} into {into} ({moved} relation(s) moved)")


def _relation_command(action: str) -> Any:
    def command(
        topic_id: Annotated[str, typer.Argument(help="Topic id.")],
        other: Annotated[str, typer.Argument(help="The topic at the other end.")],
        type_: Annotated[
            str, typer.Option("--type", help=f"One of {', '.join(RELATION_TYPES)}.")
        ] = "related_to",
        incoming: Annotated[
            bool, typer.Option("--incoming", help="OTHER points at TOPIC_ID.")
        ] = False,
        actor: AsOption = None,
        store: StoreOption = None,
    ) -> None:
        try:
            relation = RelationSpec.model_validate(
                {"other": other, "type": type_, "outgoing": not incoming}
            )
        except ValidationError as exc:
            fail(describe_validation(exc))
        request = _action(actor=actor or default_actor(), action=action, topic_id=topic_id,
                          relation=relation)  # fmt: skip
        reply: TopicReply = _run(request, store)
        verb = "added" if action == "relation_add" else "removed"
        _report(reply, done=f"{verb} {(reply.after or reply.before or {}).get('relation', '')}")

    command.__doc__ = ("Add a relation between two topics." if action == "relation_add"
                       else "Remove a relation between two topics.")  # fmt: skip
    return command


def deleted_command(
    limit: Annotated[int, typer.Option("--limit", min=1, help="Newest N.")] = 50,
    store: StoreOption = None,
) -> None:
    """Topics an admin deleted (extraction does not bring them back): who, when, how to undo."""
    from services.cli.kb import run_on_store, store_url

    async def read(opened: Any) -> Any:
        return await opened.tombstones.list(limit=limit)

    stones = run_on_store(store_url(store), read)
    if not stones:
        typer.echo("no deleted topics")
        return
    for t in stones:
        when = f"{t.deleted_at:%Y-%m-%d %H:%M}" if t.deleted_at else "?"
        skips = f"; {t.skipped} extraction(s) asserted it since" if t.skipped else ""
        undo = f"; undo: `r42 graph undo {t.undo_id}`" if t.undo_id else ""
        typer.echo(f"{t.topic_id} ({t.label}) deleted by {t.deleted_by} at {when}{skips}{undo}")


def register(kb: typer.Typer) -> None:
    """Register `topic` under the kb group."""
    topic = typer.Typer(name="topic", help="Show and curate one topic (admins).",
                        no_args_is_help=True, pretty_exceptions_enable=False)  # fmt: skip
    topic.command("show")(show_command)
    topic.command("edit")(edit_command)
    topic.command("delete")(delete_command)
    topic.command("merge")(merge_command)
    topic.command("relate")(_relation_command("relation_add"))
    topic.command("unrelate")(_relation_command("relation_remove"))
    topic.command("deleted")(deleted_command)
    kb.add_typer(topic, name="topic")
