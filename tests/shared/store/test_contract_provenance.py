"""Contract: assertions (provenance), curation marks, the change log and targeted reads."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from shared.errors import BadInputError, NotFoundError
from shared.store import (
    Assertion,
    ChunkMark,
    KbChanges,
    Relation,
    RelationKey,
    Source,
    Store,
    Topic,
    UndoLabel,
    undo_changes,
)

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def topic(tid: str, **kw: object) -> Topic:
    return Topic.model_validate({"id": tid, "label": tid.title(), "type": "concept", **kw})


def rel(source: str, target: str, type_: str = "related_to") -> Relation:
    return Relation.model_validate({"source": source, "target": target, "type": type_})


def says(source: str, chunk: int, *, topic_id: str | None = None,
         relation: Relation | None = None, version: str = "v1") -> Assertion:  # fmt: skip
    return Assertion(
        source_id=source, chunk_index=chunk, topic_id=topic_id,
        relation=relation.key if relation else None, version=version,
    )  # fmt: skip


async def _source(store: Store, source_id: str) -> None:
    await store.sources.create(Source(id=source_id, name=f"{source_id}.md", sha256="a" * 64))


async def test_a_merged_chunk_records_its_assertions_in_the_same_write(store: Store) -> None:
    await _source(store, "s1")
    okr_scrum = rel("okr", "scrum")
    changes = KbChanges(
        topics_upsert=[topic("okr"), topic("scrum")],
        relations_upsert=[okr_scrum],
        assertions=[says("s1", 0, topic_id="okr"), says("s1", 0, topic_id="scrum"),
                    says("s1", 0, relation=okr_scrum)],
    )  # fmt: skip
    assert (
        await store.apply_kb_changes(changes, chunk=ChunkMark(source_id="s1", chunk_index=0))
    ).applied
    assert [a.subject for a in await store.provenance.of_source("s1")] == [
        ("topic", "okr"), ("topic", "scrum"), ("relation", "okr|scrum|related_to"),
    ]  # fmt: skip
    assert await store.provenance.sources_of(["okr", "scrum", "nope"]) == {
        "okr": ["s1"], "scrum": ["s1"],
    }  # fmt: skip
    assert await store.provenance.sources_of_relations([okr_scrum.key]) == {
        ("okr", "scrum", "related_to"): ["s1"]
    }
    # An assertion of a subject that does not exist rejects the whole change.
    bad = KbChanges(topics_upsert=[topic("agile")], assertions=[says("s1", 1, topic_id="ghost")])
    with pytest.raises(BadInputError, match="ghost"):
        await store.apply_kb_changes(bad, chunk=ChunkMark(source_id="s1", chunk_index=1))
    assert await store.topics.get("agile") is None
    assert await store.sources.first_unmerged_chunk("s1") == 1
    with pytest.raises(BadInputError, match="okr\\|agile"):
        await store.provenance.record([says("s2", 0, relation=rel("okr", "agile"))])


async def test_retracting_a_source_names_the_orphans(store: Store) -> None:
    a_b, b_c = rel("a", "b"), rel("b", "c")
    await store.apply_kb_changes(
        KbChanges(topics_upsert=[topic("a"), topic("b"), topic("c"), topic("d")],
                  relations_upsert=[a_b, b_c])
    )  # fmt: skip
    await store.provenance.record([
        says("s1", 0, topic_id="a"), says("s1", 1, topic_id="b"), says("s1", 1, relation=a_b),
        says("s2", 0, topic_id="b"), says("s2", 0, topic_id="c"), says("s2", 0, relation=b_c),
        says("s1", 2, topic_id="c"),
    ])  # fmt: skip
    await store.curation.mark("a", ["label"], by="ADMIN", now=T0)
    everything = await store.provenance.unasserted()
    assert (everything.topic_ids, everything.relations) == (["d"], [])
    gone = await store.provenance.retract("s1")
    assert gone.removed == 4
    assert (gone.topic_ids, gone.relations) == (["a", "b", "c"], [a_b.key])
    # a is curated (kept), b and c are still asserted by s2; a->b has no source left.
    assert (gone.orphan_topic_ids, gone.orphan_relations) == ([], [a_b.key])
    assert await store.provenance.of_source("s1") == []
    left = await store.provenance.unasserted(
        topic_ids=["a", "b", "d"], relations=[a_b.key, b_c.key]
    )
    assert (left.topic_ids, left.relations) == (["d"], [a_b.key])


async def test_re_extraction_retracts_what_only_the_old_version_asserted(store: Store) -> None:
    await store.topics.upsert_many([topic("x"), topic("y"), topic("z")])
    await store.provenance.record(
        [says("s1", 0, topic_id="x"), says("s1", 1, topic_id="y"), says("s1", 2, topic_id="z")]
    )
    # Version 2 asserts x again (now in chunk 3) and y in the same chunk; z no longer.
    await store.provenance.record(
        [says("s1", 3, topic_id="x", version="v2"), says("s1", 1, topic_id="y", version="v2")]
    )
    result = await store.provenance.retract("s1", except_version="v2")
    assert (result.removed, result.topic_ids, result.orphan_topic_ids) == (2, ["x", "z"], ["z"])
    assert {(a.topic_id, a.chunk_index) for a in await store.provenance.of_source("s1")} == {
        ("x", 3), ("y", 1),
    }  # fmt: skip
    only_chunk = await store.provenance.retract("s1", chunks=[1])
    assert (only_chunk.topic_ids, only_chunk.orphan_topic_ids) == (["y"], ["y"])


async def test_deleting_subjects_drops_their_assertions_and_marks(store: Store) -> None:
    a_b = rel("a", "b")
    await store.apply_kb_changes(KbChanges(topics_upsert=[topic("a"), topic("b")],
                                           relations_upsert=[a_b]))  # fmt: skip
    await store.provenance.record(
        [says("s1", 0, topic_id="a"), says("s1", 0, topic_id="b"), says("s1", 0, relation=a_b)]
    )
    await store.curation.mark("a", ["created", "description"], by="ADMIN")
    await store.topics.delete_many(["a"])  # also deletes a->b
    assert [a.subject for a in await store.provenance.of_source("s1")] == [("topic", "b")]
    assert await store.curation.of(["a"]) == {}
    await store.topics.upsert_many([topic("a")])  # re-created: no stale provenance
    assert (await store.provenance.unasserted(topic_ids=["a"])).topic_ids == ["a"]


async def test_curation_marks(store: Store) -> None:
    await store.topics.upsert_many([topic("a"), topic("b")])
    marks = await store.curation.mark("a", ["label", "description"], by="ADMIN", now=T0)
    assert [(m.field, m.by, m.at) for m in marks] == [
        ("description", "ADMIN", T0),
        ("label", "ADMIN", T0),
    ]
    later = T0 + timedelta(hours=1)
    marks = await store.curation.mark("a", ["label"], by="ADMIN2", now=later)
    assert [(m.field, m.by) for m in marks] == [("description", "ADMIN"), ("label", "ADMIN2")]
    assert set((await store.curation.of(["a", "b"])).keys()) == {"a"}
    assert await store.curation.curated_ids() == {"a"}
    assert await store.curation.curated_ids(["b"]) == set()
    with pytest.raises(NotFoundError):
        await store.curation.mark("ghost", ["label"], by="ADMIN")
    with pytest.raises(BadInputError, match="unknown curated field"):
        await store.curation.mark("a", ["colour"], by="ADMIN")  # type: ignore[list-item]
    assert await store.curation.unmark("a", ["label"]) == 1
    assert await store.curation.unmark("a") == 1
    assert await store.curation.curated_ids() == set()


async def test_a_logged_bulk_change_can_be_undone(store: Store) -> None:
    a_b, b_c, a_c = rel("a", "b"), rel("b", "c"), rel("a", "c")
    await store.apply_kb_changes(
        KbChanges(topics_upsert=[topic("a", description="old"), topic("b"), topic("c")],
                  relations_upsert=[a_b, b_c])
    )  # fmt: skip
    await store.provenance.record([says("s1", 0, topic_id="b"), says("s1", 0, relation=b_c)])
    before = {t.id: t.description for t in await store.topics.list()}
    plan = KbChanges(
        topics_upsert=[topic("a", description="new"), topic("n")],
        relations_upsert=[a_c],
        relations_delete=[a_b.key],
        topics_delete=["b"],  # cascades b->c and b's assertions
    )
    label = UndoLabel(batch_id="plan-1", actor="ADMIN", reason="merge duplicates")
    assert (await store.apply_kb_changes(plan, undo=label)).applied
    assert not (await store.apply_kb_changes(plan, undo=label)).applied  # logged once
    assert await store.topics.ids() == {"a", "c", "n"}
    batch = await store.change_log.get("plan-1")
    assert batch is not None and batch.actor == "ADMIN" and batch.reason == "merge duplicates"
    assert sorted(t.id for t in batch.topics_before) == ["a", "b"]
    assert batch.topics_absent == ["n"] and batch.relations_absent == [a_c.key]
    assert {r.key.as_tuple() for r in batch.relations_before} == {
        a_b.key.as_tuple(),
        b_c.key.as_tuple(),
    }
    assert {a.subject for a in batch.assertions_before} == {
        ("topic", "b"),
        ("relation", "b|c|related_to"),
    }

    assert (await store.apply_kb_changes(undo_changes(batch))).applied
    assert {t.id: t.description for t in await store.topics.list()} == before
    assert {r.key.as_tuple() for r in await store.relations.list()} == {
        a_b.key.as_tuple(), b_c.key.as_tuple(),
    }  # fmt: skip
    assert {a.subject for a in await store.provenance.of_source("s1")} == {
        ("topic", "b"), ("relation", "b|c|related_to"),
    }  # fmt: skip
    done = await store.change_log.mark_undone("plan-1", by="ADMIN", now=T0)
    assert done is not None and done.undone_by == "ADMIN" and done.undone_at == T0
    assert await store.change_log.mark_undone("plan-1", by="ADMIN") is None
    assert [b.id for b in await store.change_log.list()] == ["plan-1"]


async def test_a_rejected_logged_change_leaves_no_log(store: Store) -> None:
    bad = KbChanges(relations_upsert=[rel("ghost", "other")])
    with pytest.raises(BadInputError):
        await store.apply_kb_changes(bad, undo=UndoLabel(batch_id="bad-1", actor="ADMIN"))
    if store.backend == "sqlite" or getattr(store, "transactions", False):
        assert await store.change_log.get("bad-1") is None


async def test_recent_ids_and_targeted_reads(store: Store) -> None:
    for i in range(5):
        await store.topics.upsert_many([topic(f"t{i}")])
        await asyncio.sleep(0.002)  # distinct updated_at (millisecond precision)
    await store.topics.upsert_many([topic("t1", description="touched again")])
    assert await store.topics.recent_ids(3) == ["t1", "t4", "t3"]
    assert len(await store.topics.recent_ids()) == 5
    assert [t.id for t in await store.topics.get_many(["t3", "t0", "nope"])] == ["t0", "t3"]
    await store.relations.upsert_many([rel("t0", "t1"), rel("t2", "t3"), rel("t3", "t4")])
    touching = await store.relations.touching(["t3", "t1"])
    assert [r.key.as_tuple() for r in touching] == [
        ("t0", "t1", "related_to"), ("t2", "t3", "related_to"), ("t3", "t4", "related_to"),
    ]  # fmt: skip
    assert await store.relations.touching([]) == []


def test_an_assertion_names_exactly_one_subject() -> None:
    with pytest.raises(ValueError, match="either a topic_id or a relation"):
        Assertion(source_id="s1", chunk_index=0)
    with pytest.raises(ValueError, match="either a topic_id or a relation"):
        Assertion(
            source_id="s1",
            topic_id="a",
            relation=RelationKey(source="a", target="b", type="part_of"),
        )
