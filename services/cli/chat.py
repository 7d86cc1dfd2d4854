"""CLI commands: `r42 kb search|context` and `r42 ask`, in-process on the configured store.

No running stack is needed: the commands open the store (and for `ask` the configured LLM
provider: Anthropic with ANTHROPIC_API_KEY, else offline) and run R42's own code.
`search` and `context` join the `kb` group that services.cli.kb registers, so this module
must be registered after it (the order of COMMAND_MODULES).
"""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table
from rich.text import Text

from services.cli.confirm import STATUS_LINES, decide, yes_or_no
from services.cli.kb import StoreOption, fail, run_on_store, store_url
from shared.bus import ChatReply, ChatRequest
from shared.config import build_settings
from shared.errors import R42Error
from shared.kb import KbContext
from shared.store import Store, describe_validation, open_store

JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def search_command(
    query: Annotated[str, typer.Argument(help="What to search for.")],
    k: Annotated[int, typer.Option("--k", min=1, max=100, help="How many topics.")] = 10,
    as_json: JsonOption = False,
    store: StoreOption = None,
) -> None:
    """Rank knowledge-graph topics for a query (the retrieval R42 uses)."""
    if not query.strip():
        fail("QUERY must not be empty", code=2)

    async def action(s: Store) -> list[dict[str, object]]:
        from services.r42.knowledge import load_snapshot

        snapshot = await load_snapshot(s)
        return [
            {"id": hit.topic_id, "label": snapshot.topics[hit.topic_id].label,
             "score": round(hit.score, 4), "verbatim": hit.verbatim}
            for hit in snapshot.index.search(query, k=k)
        ]  # fmt: skip

    hits = run_on_store(store_url(store), action)
    if as_json:
        typer.echo(json.dumps(hits, ensure_ascii=False, indent=2))
        return
    table = Table(title=f"{len(hits)} topic(s) for {query!r}", title_justify="left")
    for column in ("#", "id", "label", "score", "named"):
        table.add_column(column, justify="right" if column in ("#", "score") else "left")
    for rank, hit in enumerate(hits, start=1):
        table.add_row(
            str(rank), Text(str(hit["id"])), Text(str(hit["label"])), f"{hit['score']:.4f}",
            "yes" if hit["verbatim"] else "",
        )  # fmt: skip
    Console(highlight=False).print(table)


def context_command(
    question: Annotated[str, typer.Argument(help="The question R42 would be asked.")],
    as_json: JsonOption = False,
    store: StoreOption = None,
) -> None:
    """Show the KB context block R42 would get for a question, and its token estimate."""
    if not question.strip():
        fail("QUESTION must not be empty", code=2)

    async def action(s: Store) -> KbContext:
        from services.r42.knowledge import load_snapshot, turn_context

        snapshot = await load_snapshot(s)
        return await turn_context(store=s, snapshot=snapshot, question=question)

    context = run_on_store(store_url(store), action)
    if as_json:
        doc = {
            "text": context.text, "topic_ids": list(context.topic_ids),
            "kb_hash": context.kb_hash, "token_estimate": context.token_estimate,
        }  # fmt: skip
        typer.echo(json.dumps(doc, ensure_ascii=False, indent=2))
        return
    typer.echo(context.text)
    typer.echo(
        f"\n~{context.token_estimate} tokens, {len(context.topic_ids)} topic(s), "
        f"kb_hash {context.kb_hash}"
    )


async def _ask(url: str, request: ChatRequest) -> ChatReply:
    from services.r42.knowledge import KbCache
    from services.r42.offline import offline_plans
    from services.r42.turn import chat_turn
    from shared.llm import configure_llm, reset_llm

    settings = build_settings(store=url)
    store = await open_store(url)
    kb = KbCache(store)
    runtime = configure_llm(settings, offline_plans=offline_plans(lambda: kb.current))
    try:
        return await chat_turn(store=store, kb=kb, request=request, admins=settings.admins)
    finally:
        await kb.aclose()
        await store.close()
        await runtime.aclose()
        reset_llm()


def ask_command(
    question: Annotated[str, typer.Argument(help="The message to send to R42.")] = "",
    user: Annotated[str, typer.Option("--user", help="User id (its thread is used).")] = "cli",
    name: Annotated[str, typer.Option("--name", help="Display name R42 sees.")] = "",
    confirm: Annotated[
        bool, typer.Option("--confirm", help="Confirm the user's open proposal (or `ja`).")
    ] = False,
    decline: Annotated[
        bool, typer.Option("--decline", help="Decline the user's open proposal (or `nee`).")
    ] = False,
    proposal: Annotated[
        str | None, typer.Option("--proposal", metavar="ID", help="Which proposal to decide.")
    ] = None,
    as_json: JsonOption = False,
    store: StoreOption = None,
) -> None:
    """One full R42 turn in-process: prints the answer, its sources and any proposal.

    The user is an admin only when R42_ADMINS lists its --user id.
    """
    if confirm and decline:
        fail("give --confirm or --decline, not both", code=2)
    if confirm or decline:
        _decide(user=user, accept=confirm, proposal_id=proposal, store=store, required=True)
        return
    if not question.strip():
        fail("QUESTION must not be empty (or give --confirm / --decline)", code=2)
    answer = yes_or_no(question)
    if answer is not None and _decide(
        user=user, accept=answer, proposal_id=proposal, store=store, required=False
    ):
        return
    try:
        request = ChatRequest(user_id=user, user_name=name or user, text=question)
    except ValidationError as exc:
        fail(f"invalid input: {describe_validation(exc)}", code=2)
    url = store_url(store)
    try:
        reply = asyncio.run(_ask(url, request))
    except R42Error as exc:
        fail(str(exc))
    except ValidationError as exc:
        fail(f"invalid settings: {describe_validation(exc)}")
    if as_json:
        typer.echo(reply.model_dump_json(indent=2))
    else:
        _print_reply(reply, user=user)
    if reply.error_ref is not None:
        raise typer.Exit(1)


def _decide(
    *, user: str, accept: bool, proposal_id: str | None, store: str | None, required: bool
) -> bool:
    """Decide the user's open proposal and print the outcome; False when there is none."""
    try:
        settings = build_settings(store=store_url(store))
        found, reply = asyncio.run(
            decide(settings, user_id=user, proposal_id=proposal_id, accept=accept)
        )
    except R42Error as exc:
        fail(str(exc))
    except ValidationError as exc:
        fail(f"invalid input: {describe_validation(exc)}", code=2)
    if found is None or reply is None:
        if not required:
            return False
        which = (
            f"proposal {proposal_id} not found" if proposal_id else f"no open proposal for {user}"
        )
        fail(f"{which}; ask R42 to add something first", code=1)
    typer.echo(f"proposal {found.id}: {STATUS_LINES[reply.status]}")
    if reply.status == "not_found":
        raise typer.Exit(1)
    return True


def _print_reply(reply: ChatReply, *, user: str) -> None:
    out = Console(highlight=False, soft_wrap=True, markup=False)
    out.print(reply.text)
    if reply.sources:
        labels = ", ".join(f"{s.label} [{s.id}]" for s in reply.sources)
        out.print(f"\n{reply.sources_label}: {labels}")
    if reply.proposal is not None:
        out.print(f"\nVoorstel {reply.proposal.id}: {reply.proposal.summary}")
        who = "" if user == "cli" else f" --user {user}"
        out.print(f"(confirm: r42 ask{who} --confirm, or reply `ja`; decline: --decline)")


def register(app: typer.Typer) -> None:
    """Add `kb search`, `kb context` to the kb group and `ask` to the root app."""
    kb = _group(app, "kb")
    if kb is None:
        raise RuntimeError("services.cli.chat must be registered after services.cli.kb")
    kb.command("search")(search_command)
    kb.command("context")(context_command)
    app.command("ask")(ask_command)


def _group(app: typer.Typer, name: str) -> typer.Typer | None:
    """The sub-app registered under `name` (add_typer name, or the sub-app's own name)."""
    for info in app.registered_groups:
        sub = info.typer_instance
        if sub is None:
            continue
        # Unset typer options are placeholder objects, not strings: compare strings only.
        names = (info.name, sub.info.name)
        if any(isinstance(n, str) and n == name for n in names):
            return sub
    return None
