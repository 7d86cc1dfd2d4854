"""Graph analysis (admin): the reasoning tier proposes clean-up; preview first, apply on request."""

from __future__ import annotations

import uuid

from services.extractor.graph_plan import GraphPlan, graph_fingerprint, plan_graph_actions
from services.extractor.outcomes import Publish, publish_kb_updated
from services.extractor.pipeline import ask_with_output_retries
from services.extractor.ports import ExtractorStore
from services.extractor.prompts import GRAPH_SYSTEM, graph_message
from services.extractor.tools import EMIT_GRAPH_ACTIONS, GraphActions
from services.extractor.undo import check_bound, record_before_image
from shared.errors import BadInputError
from shared.llm import Limiter
from shared.store import KbChangeResult

MAX_TOPICS = 3000


async def analyze_graph(*, store: ExtractorStore, limiter: Limiter | None) -> GraphPlan:
    """Ask for clean-up actions over a compact view of the graph; change nothing (dry run)."""
    topics = await store.topics.list()
    relations = await store.relations.list()
    if not topics:
        return GraphPlan(fingerprint=graph_fingerprint([], []), summary="the graph is empty")
    if len(topics) > MAX_TOPICS:
        raise BadInputError(
            f"the graph has {len(topics)} topics; analysis handles at most {MAX_TOPICS} at once"
        )
    user = graph_message(
        topics=[(t.id, t.label, t.type, t.learning_relevance, t.relevance_locked) for t in topics],
        relations=[(r.source, r.type, r.target) for r in relations],
    )
    result = await ask_with_output_retries(
        task="extractor.graph_analysis", retries=1, tier="reasoning", system=GRAPH_SYSTEM,
        user=user, tools=[EMIT_GRAPH_ACTIONS], tool_choice=EMIT_GRAPH_ACTIONS,
        limiter=limiter, max_tokens=8192,
    )  # fmt: skip
    actions = result.tool_uses[0].parsed
    assert isinstance(actions, GraphActions)
    return plan_graph_actions(actions, topics, relations)


async def apply_graph_plan(
    *,
    store: ExtractorStore,
    plan: GraphPlan,
    publish: Publish | None,
    max_deletions: int | None = None,
) -> tuple[KbChangeResult, str | None]:
    """Apply a previewed plan atomically, only if the graph is still what was analysed.

    A plan deleting more topics than the bound is refused unless `max_deletions` raises it;
    the before-image is recorded first, so `undo` can restore it. Returns the undo id.
    """
    topics = await store.topics.list()
    current = graph_fingerprint(topics, await store.relations.list())
    if current != plan.fingerprint:
        raise BadInputError(
            "the knowledge graph changed since the preview; nothing was applied "
            "(run `r42 graph analyze` again)"
        )
    if plan.empty:
        return KbChangeResult(applied=False), None
    check_bound(plan.changes, graph_size=len(topics), allowed=max_deletions)
    undo_id = await record_before_image(store, plan.changes, reason="graph analysis")
    result = await store.apply_kb_changes(plan.changes)
    if publish is not None:
        await publish_kb_updated(
            store, publish, changed_ids=plan.changed_ids, reason="graph analysis applied",
            removed_ids=plan.changes.topics_delete, key=("graph-analysis", uuid.uuid4().hex),
        )  # fmt: skip
    return result, undo_id
