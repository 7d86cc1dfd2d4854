"""CLI: `r42 graph analyze|apply|undo|held` — through the running stack, else in-process.

Both paths run the KG owner's own code (services/extractor/graph_rpc.py): the same admin
rule, bound, re-validation and undo. The operator is the console identity
(`console-<login>`), an admin in the embedded runtime; elsewhere list it in R42_ADMINS.
Every action is recorded in the audit trail with surface `cli`.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import typer
from pydantic import BaseModel
from rich.console import Console
from rich.table import Table
from rich.text import Text

from services.cli.ingest import load_settings, run
from services.cli.owner_words import in_english
from services.extractor.cancel import SourceTasks
from services.extractor.graph_rpc import answer_analyze, answer_apply, answer_undo
from services.extractor.handlers import ExtractorDeps
from services.extractor.review import discard, held_changes, release
from services.extractor.session import AdminSession, admin_session
from services.extractor.undo import undo_entries
from shared.bus import Event
from shared.bus import request as rpc_request
from shared.bus.graph_rpc import (
    GRAPH_ANALYZE_SUBJECT,
    GRAPH_APPLY_SUBJECT,
    GRAPH_UNDO_SUBJECT,
    GraphAnalyzeRequest,
    GraphApplyReply,
    GraphApplyRequest,
    GraphPlanReply,
    GraphUndoReply,
    GraphUndoRequest,
)
from shared.config import Settings
from shared.errors import BadInputError, R42Error
from shared.identity import local_user_id
from shared.store import AuditEntry

MaxDeletions = Annotated[int | None, typer.Option(
    "--max-deletions", min=0, help="Raise the bound on topics deleted at once.")]  # fmt: skip


def _deps(session: AdminSession, settings: Settings) -> ExtractorDeps:
    """The KG owner's dependencies over the CLI's session (publish when a stack runs)."""
    from services.extractor.config import build_extractor_settings

    async def no_bus(event: Event) -> None:
        del event  # no stack runs: readers load the store when they start

    return ExtractorDeps(store=session.store, publish=session.publish or no_bus,
                         limiter=session.limiter, settings=settings,
                         extractor=build_extractor_settings(), tasks=SourceTasks())  # fmt: skip


async def _ask[R: BaseModel](
    settings: Settings, subject: str, req: BaseModel, model: type[R], *, llm: bool, wait_s: float
) -> R:
    """Over the bus when the stack runs, else the owner's answer in-process; audited."""
    user = str(getattr(req, "user_id", ""))
    async with admin_session(settings, llm=llm) as session:
        action = {GRAPH_ANALYZE_SUBJECT: "graph.analyze", GRAPH_APPLY_SUBJECT: "graph.apply",
                  GRAPH_UNDO_SUBJECT: "graph.undo"}[subject]  # fmt: skip
        target = str(getattr(req, "plan_id", "") or getattr(req, "undo_id", "") or "graph")
        try:
            if session.broker is not None:
                reply: R = await rpc_request(
                    session.broker, subject, req, response_model=model, timeout=wait_s,
                    namespace=session.namespace,
                )  # fmt: skip
            else:
                answer = await _local(session, settings, req)
                assert isinstance(answer, model)
                reply = answer
        except R42Error as exc:
            worded = in_english(exc)  # the owner's typed reason, not its Dutch message
            refused = exc.code == "not_admin"
            await _audit(session, user, action, target, allowed=not refused,
                         after={"outcome": "refused" if refused else "failed",
                                "error": str(worded)[:500]})  # fmt: skip
            if worded is exc:
                raise
            raise worded from None
        await _audit(session, user, action, target, allowed=True, after=_summary(reply))
        return reply


async def _local(session: AdminSession, settings: Settings, req: BaseModel) -> BaseModel:
    deps = _deps(session, settings)
    if isinstance(req, GraphAnalyzeRequest):
        return await answer_analyze(req, deps=deps, lock=asyncio.Lock())
    if isinstance(req, GraphApplyRequest):
        return await answer_apply(req, deps=deps)
    assert isinstance(req, GraphUndoRequest)
    return await answer_undo(req, deps=deps)


def _summary(reply: BaseModel) -> dict[str, Any]:
    if isinstance(reply, GraphPlanReply):
        return {"plan_id": reply.plan_id, "actions": len(reply.actions)}
    return reply.model_dump()


async def _audit(
    session: AdminSession, user: str, action: str, target: str, *, allowed: bool,
    after: dict[str, Any],
) -> None:  # fmt: skip
    entry = AuditEntry(actor=user, action=action, target=target[:500], allowed=allowed,
                       after=after, surface="cli")  # fmt: skip
    await session.store.audit.record(entry)


def plan_table(plan: GraphPlanReply) -> Table:
    """The preview: every action with its key, what it does and why."""
    table = Table(title=f"Graph analysis plan {plan.plan_id} (preview)", title_justify="left")
    for column in ("key", "action", "what", "why"):
        table.add_column(column, overflow="fold")
    for a in plan.actions:  # the owner's English wording (what/why are for chat surfaces)
        table.add_row(a.key, a.kind, Text(a.what_en or a.what), Text(a.why_en or a.why))
    for why in plan.skipped_en or plan.skipped:
        table.add_row("", "skipped", "", Text(why), style="dim")
    return table


def applied_line(reply: GraphApplyReply) -> str:
    """One line on an applied selection."""
    return (f"applied: {reply.merged} merge(s), {reply.deleted} deletion(s), "
            f"{reply.relations} relation(s), {reply.relevance} relevance update(s); "
            f"undo with `r42 graph undo {reply.undo_id}`")  # fmt: skip


def _keys(only: str | None) -> list[str]:
    if only is None:
        return []  # every action of the plan
    keys = [k.strip() for k in only.split(",") if k.strip()]
    if not keys:
        raise BadInputError("--only needs action keys such as m0,d1 (see `r42 graph analyze`)")
    return keys


def register(app: typer.Typer) -> None:
    """Register `r42 graph …` on the root app."""
    graph = typer.Typer(help="Knowledge-graph maintenance.", no_args_is_help=True)
    app.add_typer(graph, name="graph")

    @graph.command("analyze")
    def analyze_command(
        apply: Annotated[bool, typer.Option("--apply", help="Apply after confirming.")] = False,
        yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask to confirm.")] = False,
        max_deletions: MaxDeletions = None,
    ) -> None:
        """Propose merges, deletions, relations and relevance fixes; a stored plan to apply."""
        settings, user = load_settings(), local_user_id()
        console = Console(highlight=False, soft_wrap=True)
        plan = run(lambda: _ask(settings, GRAPH_ANALYZE_SUBJECT, GraphAnalyzeRequest(user_id=user),
                                GraphPlanReply, llm=True, wait_s=300.0))  # fmt: skip
        if plan.actions or plan.skipped:
            console.print(plan_table(plan))
        if plan.summary:
            console.print(Text(plan.summary))
        if not plan.actions:
            console.print("nothing to change")
            return
        if not apply:
            console.print(f"dry run: nothing was changed; apply with `r42 graph apply "
                          f"{plan.plan_id}` (all) or `--only {plan.actions[0].key},…`")  # fmt: skip
            return
        if not yes and not typer.confirm(f"Apply these {len(plan.actions)} action(s)?"):
            console.print("not applied")
            raise typer.Exit(1)
        keys = [a.key for a in plan.actions]
        console.print(applied_line(run(lambda: _apply(settings, user, plan.plan_id, keys,
                                                      max_deletions))))  # fmt: skip

    @graph.command("apply")
    def apply_command(
        plan_id: Annotated[str, typer.Argument(metavar="PLAN_ID")],
        only: Annotated[str | None, typer.Option(
            "--only", metavar="KEYS", help="Comma-separated action keys (default: all).")] = None,
        max_deletions: MaxDeletions = None,
    ) -> None:  # fmt: skip
        """Apply a stored plan (or the chosen actions of it): bounded, re-validated, undoable."""
        settings, user = load_settings(), local_user_id()

        async def main() -> GraphApplyReply:
            return await _apply(settings, user, plan_id, _keys(only), max_deletions)

        Console(highlight=False, soft_wrap=True).print(applied_line(run(main)))

    @graph.command("held")
    def held_command(
        release_key: Annotated[str | None, typer.Option("--release", metavar="KEY",
                                                        help="Apply a held change.")] = None,
        discard_key: Annotated[str | None, typer.Option("--discard", metavar="KEY",
                                                        help="Drop a held change.")] = None,
    ) -> None:  # fmt: skip
        """Extractions held for review (they would rewrite many existing topics)."""
        settings = load_settings()
        Console(highlight=False, soft_wrap=True).print(
            run(lambda: _held(settings, release_key, discard_key))
        )

    @graph.command("undo")
    def undo_command(
        undo_id: Annotated[str | None, typer.Argument(metavar="[ID]")] = None,
        listing: Annotated[bool, typer.Option("--list", help="List what can be undone.")] = False,
    ) -> None:
        """Undo an applied graph analysis or source deletion (the newest by default)."""
        settings, user = load_settings(), local_user_id()
        Console(highlight=False, soft_wrap=True).print(
            run(lambda: _undo(settings, user, undo_id, listing))
        )


async def _apply(
    settings: Settings, user: str, plan_id: str, keys: list[str], max_deletions: int | None
) -> GraphApplyReply:
    try:
        req = GraphApplyRequest(user_id=user, plan_id=plan_id, keys=keys, every=not keys,
                                max_deletions=max_deletions)  # fmt: skip
    except ValueError:
        raise BadInputError(f"{plan_id!r} is not a plan id (see `r42 graph analyze`)") from None
    return await _ask(settings, GRAPH_APPLY_SUBJECT, req, GraphApplyReply, llm=False, wait_s=60.0)


async def _held(settings: Settings, release_key: str | None, discard_key: str | None) -> str:
    async with admin_session(settings) as session:
        if release_key:
            undo_id = await release(session.store, release_key, publish=session.publish)
            return f"released {release_key}; undo with `r42 graph undo {undo_id}`"
        if discard_key:
            await discard(session.store, discard_key)
            return f"discarded {discard_key}"
        held = await held_changes(session.store)
    return "\n".join(f"{h.key}  {h.at}  {h.reason}: {', '.join(h.updated_ids[:8])}"
                     for h in held) or "nothing is held for review"  # fmt: skip


async def _undo(settings: Settings, user: str, undo_id: str | None, listing: bool) -> str:
    if listing or undo_id is None:
        async with admin_session(settings) as session:
            entries = await undo_entries(session.store)
        if listing:
            return "\n".join(f"{e.id}  {e.at}  {e.reason} ({e.topics} topic(s))"
                             for e in entries) or "nothing to undo"  # fmt: skip
        if not entries:
            raise BadInputError("there is nothing to undo")
        undo_id = entries[0].id
    req = GraphUndoRequest(user_id=user, undo_id=undo_id)
    done = await _ask(settings, GRAPH_UNDO_SUBJECT, req, GraphUndoReply, llm=False, wait_s=60.0)
    return f"undid {done.undo_id}: {done.topics} topic(s) restored or removed"
