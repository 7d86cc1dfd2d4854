"""Graph analysis: the model's actions become an exact plan; preview changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from services.extractor.graph_analysis import analyze_graph, apply_graph_plan
from services.extractor.graph_plan import plan_graph_actions
from services.extractor.tools import GraphActions
from services.extractor.undo import bulk_bound, undo
from shared.errors import BadInputError, NotFoundError
from shared.store import Relation, Store, Topic, export_kb
from tests.fakes.anthropic_server import FakeAnthropic, tool_reply

from .conftest import user_text


def t(tid: str, label: str, *, locked: bool = False, relevance: str = "standard") -> Topic:
    return Topic(
        id=tid, label=label, type="concept", learning_relevance=relevance, relevance_locked=locked
    )


def r(source: str, target: str, kind: str = "related_to") -> Relation:
    return Relation(source=source, target=target, type=kind)


TOPICS = [
    t("teamlead", "Teamlead"),
    t("team-lead", "Team lead"),
    t("verlof", "Verlof"),
    t("ziekte", "Ziekte"),
    t("cfo", "CFO", locked=True, relevance="core"),
    t("footer", "Footer"),
]
RELATIONS = [
    r("verlof", "teamlead"),
    r("verlof", "team-lead"),
    r("team-lead", "ziekte"),
    r("team-lead", "teamlead", "part_of"),
    r("footer", "verlof"),
]
ACTIONS = GraphActions.model_validate(
    {
        "merges": [{"keep": "teamlead", "delete": ["team-lead", "cfo", "ghost"], "reason": "same"}],
        "deletions": [{"id": "footer", "reason": "boilerplate"}, {"id": "cfo", "reason": "x"}],
        "new_relations": [
            {"source": "ziekte", "target": "verlof", "type": "related_to"},
            {"source": "verlof", "target": "team-lead", "type": "related_to"},
        ],
        "relevance_updates": [
            {"id": "verlof", "relevance": "core", "reason": "everyone"},
            {"id": "cfo", "relevance": "exclude", "reason": "no"},
        ],
    }
)


def test_plan_repoints_collapses_and_respects_locks() -> None:
    plan = plan_graph_actions(ACTIONS, TOPICS, RELATIONS)
    assert [(m.keep, m.deleted, m.repointed, m.collapsed) for m in plan.merges] == [
        ("teamlead", ("team-lead",), 1, 2)  # team-lead→ziekte moves; a dup and a self-loop go
    ]
    assert [(d[0], d[2]) for d in plan.deletions] == [("footer", 1)]
    assert sorted(plan.changes.topics_delete) == ["footer", "team-lead"]
    written = {(x.source, x.target, x.type) for x in plan.changes.relations_upsert}
    assert written == {("teamlead", "ziekte", "related_to"), ("ziekte", "verlof", "related_to")}
    assert [(u.topic_id, u.old, u.new) for u in plan.relevance] == [("verlof", "standard", "core")]
    skipped = " | ".join(plan.skipped)
    assert "cfo has a locked relevance" in skipped and "ghost does not exist" in skipped
    assert "relevance cfo: locked" in skipped and "exists already" in skipped
    assert plan.changed_ids == ["footer", "team-lead", "teamlead", "verlof", "ziekte"]


def test_every_plan_row_is_worded_in_dutch_for_chat_and_english_for_the_cli() -> None:
    plan = plan_graph_actions(ACTIONS, TOPICS, RELATIONS)
    rows = plan.keyed_rows()
    assert [row[0] for row in rows] == ["m0", "d0", "r0", "v0"]
    dutch = [(what_nl, why_nl) for *_, what_nl, why_nl in rows]
    assert dutch == [
        ("behoud teamlead ← verwijder team-lead",
         "same (1 relatie(s) omgezet, 2 dubbele samengevoegd)"),
        ("footer", "boilerplate (1 relatie(s) verwijderd)"),
        ("ziekte hangt samen met verlof", ""),
        ("verlof: standaard → kern", "everyone"),
    ]  # fmt: skip
    assert (
        rows[0][2] == "keep teamlead ← delete team-lead" and rows[3][2] == "verlof: standard → core"
    )
    assert len(plan.skipped_nl) == len(plan.skipped) >= 4
    chat = " | ".join(plan.skipped_nl)
    assert "cfo heeft een vergrendelde relevantie" in chat and "ghost bestaat niet" in chat
    assert "relatie verlof hangt samen met team-lead: bestaat al" in chat
    assert not any(word in chat for word in ("related_to", "locked", "exists", "merge:"))


async def test_preview_changes_nothing_and_apply_changes_exactly_the_plan(
    fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store
) -> None:
    await store.topics.upsert_many(TOPICS)
    await store.relations.upsert_many(RELATIONS)
    fake_anthropic.enqueue(tool_reply("emit_graph_actions", ACTIONS.model_dump()))
    before = await export_kb(store)
    plan = await analyze_graph(store=store, limiter=None)
    assert await export_kb(store) == before  # the dry run wrote nothing
    body = fake_anthropic.requests[0].body
    assert body["model"] == fake_llm.settings.model_reasoning
    assert body["tool_choice"] == {"type": "tool", "name": "emit_graph_actions"}
    assert "cfo | CFO | concept | core (locked)" in user_text(body)
    assert "team-lead | related_to | ziekte" in user_text(body)

    published: list[Any] = []

    async def publish(event: Any) -> None:
        published.append(event)

    _, undo_id = await apply_graph_plan(store=store, plan=plan, publish=publish, by="U1")
    assert await store.topics.ids() == {"teamlead", "verlof", "ziekte", "cfo"}
    # What the plan deleted or merged away stays gone when a source still asserts it.
    stones = await store.tombstones.get_many(["footer", "team-lead", "teamlead"])
    assert {(t.topic_id, t.deleted_by, t.undo_id) for t in stones.values()} == {
        ("footer", "U1", undo_id), ("team-lead", "U1", undo_id)
    }  # fmt: skip
    assert {(x.source, x.target, x.type) for x in await store.relations.list()} == {
        ("verlof", "teamlead", "related_to"),
        ("teamlead", "ziekte", "related_to"),
        ("ziekte", "verlof", "related_to"),
    }
    verlof, cfo = await store.topics.get("verlof"), await store.topics.get("cfo")
    assert verlof is not None and verlof.learning_relevance == "core"
    assert cfo is not None and (cfo.learning_relevance, cfo.relevance_locked) == ("core", True)
    assert [e.subject for e in published] == ["kb.updated"]
    assert published[0].changed_ids == plan.changed_ids
    assert sorted(published[0].removed_ids) == ["footer", "team-lead"]

    # Every applied plan can be undone from its recorded before-image.
    assert undo_id is not None
    done, _, touched = await undo(store, undo_id)
    assert done == undo_id and "footer" in touched
    assert await export_kb(store) == before
    assert await store.tombstones.list() == []  # restored: extraction may assert them again
    with pytest.raises(NotFoundError, match="nothing to undo"):
        await undo(store)


async def test_a_plan_deleting_more_than_the_bound_is_refused_unless_raised(
    store: Store,
) -> None:
    topics = [t(f"onderwerp-{i}", f"Onderwerp {i}") for i in range(40)]
    await store.topics.upsert_many(topics)
    wipe = GraphActions.model_validate(
        {"deletions": [{"id": x.id, "reason": "the model said so"} for x in topics]}
    )
    plan = plan_graph_actions(wipe, topics, [])
    assert len(plan.changes.topics_delete) == 40
    before = await export_kb(store)
    with pytest.raises(BadInputError, match=r"deletes 40 of 40 topics; the bound is 5"):
        await apply_graph_plan(store=store, plan=plan, publish=None)
    assert await export_kb(store) == before  # nothing applied
    _, undo_id = await apply_graph_plan(store=store, plan=plan, publish=None, max_deletions=40)
    assert await store.topics.ids() == set()
    await undo(store, undo_id)
    assert await export_kb(store) == before
    assert bulk_bound(40) == 5 and bulk_bound(150) == 15 and bulk_bound(50_000) == 20


async def test_apply_refuses_a_plan_for_a_graph_that_changed(
    fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store
) -> None:
    await store.topics.upsert_many(TOPICS)
    await store.relations.upsert_many(RELATIONS)
    fake_anthropic.enqueue(tool_reply("emit_graph_actions", ACTIONS.model_dump()))
    plan = await analyze_graph(store=store, limiter=None)
    await store.topics.upsert_many([t("nieuw", "Nieuw")])
    before = await export_kb(store)
    with pytest.raises(BadInputError, match="changed since the preview"):
        await apply_graph_plan(store=store, plan=plan, publish=None)
    assert await export_kb(store) == before


async def test_offline_analysis_merges_near_duplicate_labels(
    offline_extractor: Any, store: Store
) -> None:
    await store.topics.upsert_many(TOPICS)
    await store.relations.upsert_many(RELATIONS)
    plan = await analyze_graph(store=store, limiter=None)
    # "Teamlead" and "Team lead" fold to the same key; the better-connected id is kept.
    assert [(m.keep, m.deleted) for m in plan.merges] == [("team-lead", ("teamlead",))]
    assert plan.deletions == () and plan.relevance == ()


async def test_an_empty_graph_needs_no_model_call(
    fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store
) -> None:
    plan = await analyze_graph(store=store, limiter=None)
    assert plan.empty and fake_anthropic.requests == []
