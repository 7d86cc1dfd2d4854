"""Graph analysis (admin): the reasoning tier proposes clean-up; preview first, apply on request.

A plan is stored (a day) under a plan id with the fingerprint of the graph it was made for;
applying a selection of its actions re-validates them against that graph, refuses when the
graph changed since, keeps the deletion bound and records a before-image for undo.
"""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

from services.extractor.graph_plan import (
    GraphPlan,
    graph_fingerprint,
    plan_graph_actions,
    select_actions,
)
from services.extractor.outcomes import Publish, publish_kb_updated
from services.extractor.pipeline import ask_with_output_retries
from services.extractor.ports import ExtractorStore
from services.extractor.prompts import GRAPH_SYSTEM, graph_message
from services.extractor.tombstones import bury
from services.extractor.tools import EMIT_GRAPH_ACTIONS, GraphActions
from services.extractor.undo import bulk_bound, check_bound, record_before_image
from shared.errors import BadInputError, NotFoundError
from shared.llm import Limiter
from shared.store import KbChangeResult, Relation, Topic

MAX_TOPICS = 3000
PLAN_SCOPE = "graph-plan"
PLAN_TTL_S = 24 * 3600.0


async def ask_graph_actions(
    *, store: ExtractorStore, limiter: Limiter | None
) -> tuple[GraphActions, list[Topic], list[Relation]]:
    """The model's clean-up actions over a compact view of the graph (and that graph)."""
    topics = await store.topics.list()
    relations = await store.relations.list()
    if not topics:
        return GraphActions(summary="the graph is empty"), topics, relations
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
    return actions, topics, relations


async def analyze_graph(*, store: ExtractorStore, limiter: Limiter | None) -> GraphPlan:
    """Ask for clean-up actions and plan them; change nothing (dry run)."""
    actions, topics, relations = await ask_graph_actions(store=store, limiter=limiter)
    if not topics:
        return GraphPlan(fingerprint=graph_fingerprint([], []), summary=actions.summary)
    return plan_graph_actions(actions, topics, relations)


async def analyze_and_store(
    *, store: ExtractorStore, limiter: Limiter | None, by: str
) -> tuple[str, GraphPlan, int]:
    """Analyse, store the model's actions under a new plan id; (plan id, plan, graph size)."""
    actions, topics, relations = await ask_graph_actions(store=store, limiter=limiter)
    plan = plan_graph_actions(actions, topics, relations)
    plan_id = f"plan-{uuid.uuid4().hex[:16]}"
    value = {"actions": actions.model_dump(mode="json"), "fingerprint": plan.fingerprint,
             "by": by}  # fmt: skip
    await store.idempotency.put_if_absent(PLAN_SCOPE, plan_id, value, ttl_s=PLAN_TTL_S)
    return plan_id, plan, len(topics)


async def stored_plan(store: ExtractorStore, plan_id: str, keys: list[str] | None) -> GraphPlan:
    """The stored plan narrowed to `keys` (None: all), planned again for its graph."""
    record = await store.idempotency.get(PLAN_SCOPE, plan_id)
    if record is None:
        raise NotFoundError(f"plan {plan_id} is unknown or expired (plans are kept a day)")
    value: dict[str, Any] = record.value
    actions = GraphActions.model_validate(value["actions"])
    if keys is not None:
        actions = select_actions(actions, keys)
    plan = plan_graph_actions(actions, await store.topics.list(), await store.relations.list())
    # The fingerprint of the graph the admin reviewed: apply refuses if it changed since.
    return dataclasses.replace(plan, fingerprint=str(value["fingerprint"]))


def deletion_bound(graph_size: int, allowed: int | None) -> int:
    """How many topics one applied plan may delete."""
    return allowed if allowed is not None else bulk_bound(graph_size)


async def apply_graph_plan(
    *,
    store: ExtractorStore,
    plan: GraphPlan,
    publish: Publish | None,
    max_deletions: int | None = None,
    by: str = "graph analysis",
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
    gone = await store.topics.get_many(plan.changes.topics_delete)
    result = await store.apply_kb_changes(plan.changes)
    # Deleted and merged-away topics stay gone when a source still asserts them (undo lifts).
    for topic in gone:
        await bury(store, topic, by=by, undo_id=undo_id)
    if publish is not None:
        await publish_kb_updated(
            store, publish, changed_ids=plan.changed_ids, reason="graph analysis applied",
            removed_ids=plan.changes.topics_delete, key=("graph-analysis", uuid.uuid4().hex),
        )  # fmt: skip
    return result, undo_id
