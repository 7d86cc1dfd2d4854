"""The extractor's answers to `rpc.extractor.graph_*`: analysis, apply a selection, undo.

Authorised here against the owner's admin list (whatever a request claims); a refusal
carries a typed code (words for each surface) and the Dutch message chat surfaces show.
"""

from __future__ import annotations

import asyncio

from services.extractor.graph_analysis import (
    analyze_and_store,
    apply_graph_plan,
    deletion_bound,
    stored_plan,
)
from services.extractor.graph_errors import refusal
from services.extractor.handlers import ExtractorDeps
from services.extractor.lifecycle import undo_change
from services.extractor.undo import undo_entries
from shared.bus.graph_rpc import (
    GraphAnalyzeRequest,
    GraphApplyReply,
    GraphApplyRequest,
    GraphPlanReply,
    GraphUndoReply,
    GraphUndoRequest,
    PlanAction,
)
from shared.errors import BadInputError, NotFoundError


def _require_admin(deps: ExtractorDeps, user_id: str) -> None:
    if not deps.is_admin(user_id):
        raise refusal("not_admin")


async def answer_analyze(
    request: GraphAnalyzeRequest, *, deps: ExtractorDeps, lock: asyncio.Lock
) -> GraphPlanReply:
    """Analyse the graph and store the plan; one analysis at a time per replica."""
    _require_admin(deps, request.user_id)
    if lock.locked():
        raise refusal("analysis_running")
    async with lock:
        plan_id, plan, size = await analyze_and_store(
            store=deps.store, limiter=deps.limiter, by=request.user_id
        )
    # Both wordings: chat surfaces show what/why/skipped (Dutch), the CLI the English ones.
    actions = [
        PlanAction.model_validate(
            {"key": key, "kind": kind, "what": what_nl[:4000], "why": why_nl[:4000],
             "what_en": what[:4000], "why_en": why[:4000]}
        )
        for key, kind, what, why, what_nl, why_nl in plan.keyed_rows()
    ]  # fmt: skip
    return GraphPlanReply(
        plan_id=plan_id if actions else "", summary=plan.summary[:4000], actions=actions,
        skipped=[s[:500] for s in plan.skipped_nl[:50]],
        skipped_en=[s[:500] for s in plan.skipped[:50]], graph_size=size,
        bound=deletion_bound(size, None),
    )  # fmt: skip


async def answer_apply(request: GraphApplyRequest, *, deps: ExtractorDeps) -> GraphApplyReply:
    """Apply the chosen actions of a stored plan (bounded, undoable)."""
    _require_admin(deps, request.user_id)
    try:
        keys = None if request.every else request.keys
        plan = await stored_plan(deps.store, request.plan_id, keys)
    except NotFoundError:
        raise refusal("plan_unknown") from None
    if plan.empty:
        raise refusal("nothing_to_apply")
    size = (await deps.store.topics.counts()).total
    bound = deletion_bound(size, request.max_deletions)
    deleting = len(set(plan.changes.topics_delete))
    if deleting > bound:
        raise refusal("over_bound", deleting=deleting, size=size, bound=bound)
    try:
        _, undo_id = await apply_graph_plan(
            store=deps.store,
            plan=plan,
            publish=deps.publish,
            max_deletions=request.max_deletions,
            by=request.user_id,
        )
    except BadInputError as exc:
        if "changed since the preview" in str(exc):
            raise refusal("graph_changed") from None
        raise
    assert undo_id is not None  # a non-empty plan always records its before-image
    return GraphApplyReply(
        undo_id=undo_id, merged=len(plan.merges), deleted=len(plan.deletions),
        relations=len(plan.new_relations), relevance=len(plan.relevance),
    )  # fmt: skip


async def answer_undo(request: GraphUndoRequest, *, deps: ExtractorDeps) -> GraphUndoReply:
    """Undo one applied change by its id."""
    _require_admin(deps, request.user_id)
    if request.undo_id not in {e.id for e in await undo_entries(deps.store)}:
        raise refusal("no_such_change", undo_id=request.undo_id)
    done, touched = await undo_change(
        store=deps.store, undo_id=request.undo_id, publish=deps.publish
    )
    return GraphUndoReply(undo_id=done, topics=len(touched))
