"""Contract: topics, relations and the atomic graph write, on every adapter."""

from __future__ import annotations

import asyncio

import pytest

from shared.errors import BadInputError, NotFoundError
from shared.store import (
    ChunkMark,
    KbChanges,
    Relation,
    RelationKey,
    Source,
    Store,
    Topic,
    TopicMetadata,
)


def topic(tid: str, **kw: object) -> Topic:
    data = {"id": tid, "label": tid.replace("-", " ").title(), "type": "concept", **kw}
    return Topic.model_validate(data)


def rel(source: str, target: str, type_: str = "related_to", **kw: object) -> Relation:
    return Relation.model_validate({"source": source, "target": target, "type": type_, **kw})


async def test_topic_crud_and_filters(store: Store) -> None:
    await store.topics.upsert_many(
        [
            topic("scrum", type="process", learning_relevance="core"),
            topic("product-owner", type="role"),
            topic("radical-transparency", description="Everything is open.",
                  metadata=TopicMetadata(source="handbook/values.md", prompt_version="x1")),
        ]
    )  # fmt: skip
    got = await store.topics.get("radical-transparency")
    assert got is not None
    assert got.description == "Everything is open."
    assert got.metadata.source == "handbook/values.md"
    assert got.metadata.prompt_version == "x1"
    assert got.created_at is not None and got.updated_at is not None
    assert await store.topics.get("nope") is None
    assert [t.id for t in await store.topics.list()] == [
        "product-owner",
        "radical-transparency",
        "scrum",
    ]
    assert [t.id for t in await store.topics.list(type="role")] == ["product-owner"]
    assert [t.id for t in await store.topics.list(relevance="core")] == ["scrum"]
    assert [t.id for t in await store.topics.get_many(["scrum", "ghost", "product-owner"])] == [
        "product-owner",
        "scrum",
    ]
    assert await store.topics.ids() == {"scrum", "product-owner", "radical-transparency"}
    counts = await store.topics.counts()
    assert counts.total == 3
    assert counts.by_type == {"process": 1, "role": 1, "concept": 1}
    assert counts.by_relevance == {"core": 1, "standard": 2}


async def test_upsert_updates_in_place_and_keeps_created_at(store: Store) -> None:
    await store.topics.upsert_many([topic("okr", label="OKR")])
    first = await store.topics.get("okr")
    await asyncio.sleep(0.01)
    await store.topics.upsert_many([topic("okr", label="Objectives and key results")])
    second = await store.topics.get("okr")
    assert first is not None and second is not None
    assert second.label == "Objectives and key results"
    assert second.created_at == first.created_at
    assert second.updated_at is not None and first.updated_at is not None
    assert second.updated_at > first.updated_at
    assert (await store.topics.counts()).total == 1


async def test_locked_relevance_survives_unlocked_upserts(store: Store) -> None:
    await store.topics.upsert_many([topic("holacracy", learning_relevance="core")])
    locked = await store.topics.set_relevance("holacracy", "exclude")
    assert (locked.learning_relevance, locked.relevance_locked) == ("exclude", True)
    await store.topics.upsert_many(
        [topic("holacracy", label="Holacracy v2", learning_relevance="core")]
    )
    after = await store.topics.get("holacracy")
    assert after is not None
    assert (after.label, after.learning_relevance, after.relevance_locked) == (
        "Holacracy v2",
        "exclude",
        True,
    )
    # An upsert that itself locks (an import of a locked row) is an explicit decision.
    await store.topics.upsert_many(
        [topic("holacracy", learning_relevance="peripheral", relevance_locked=True)]
    )
    assert (await store.topics.get("holacracy")).learning_relevance == "peripheral"  # type: ignore[union-attr]
    unlocked = await store.topics.set_relevance("holacracy", "standard", lock=False)
    assert unlocked.relevance_locked is False
    with pytest.raises(NotFoundError):
        await store.topics.set_relevance("ghost", "core")
    with pytest.raises(BadInputError):
        await store.topics.set_relevance("holacracy", "vital")


async def test_relations_unique_per_key_and_filters(store: Store) -> None:
    await store.topics.upsert_many([topic("a"), topic("b"), topic("c")])
    await store.relations.upsert_many(
        [rel("a", "b"), rel("a", "b", "depends_on"), rel("b", "c", "part_of")]
    )
    await store.relations.upsert_many([rel("a", "b", description="now described")])
    all_relations = await store.relations.list()
    assert [r.key.as_tuple() for r in all_relations] == [
        ("a", "b", "depends_on"),
        ("a", "b", "related_to"),
        ("b", "c", "part_of"),
    ]
    assert all_relations[1].description == "now described"
    assert [r.key.as_tuple() for r in await store.relations.list(topic_id="c")] == [
        ("b", "c", "part_of")
    ]
    assert len(await store.relations.list(topic_id="b")) == 3
    assert [r.type for r in await store.relations.list(type="depends_on")] == ["depends_on"]
    assert await store.relations.count_by_type() == {"related_to": 1, "depends_on": 1, "part_of": 1}
    deleted = await store.relations.delete_many(
        [RelationKey(source="a", target="b", type="depends_on"),
         RelationKey(source="c", target="a", type="related_to")]
    )  # fmt: skip
    assert deleted == 1
    assert len(await store.relations.list()) == 2


async def test_relation_to_missing_topic_is_rejected_and_writes_nothing(store: Store) -> None:
    await store.topics.upsert_many([topic("a"), topic("b")])
    with pytest.raises(BadInputError, match="ghost"):
        await store.relations.upsert_many([rel("a", "b"), rel("a", "ghost")])
    assert await store.relations.list() == []


def test_relation_pointing_at_itself_is_invalid() -> None:
    with pytest.raises(ValueError, match="itself"):
        rel("a", "a")


async def test_deleting_topics_removes_their_relations(store: Store) -> None:
    await store.topics.upsert_many([topic("a"), topic("b"), topic("c")])
    await store.relations.upsert_many([rel("a", "b"), rel("c", "b", "executed_by"), rel("a", "c")])
    assert await store.topics.delete_many(["b", "ghost"]) == 1
    assert await store.topics.ids() == {"a", "c"}
    assert [r.key.as_tuple() for r in await store.relations.list()] == [("a", "c", "related_to")]


async def test_apply_kb_changes_is_all_or_nothing(store: Store) -> None:
    await store.topics.upsert_many([topic("a"), topic("b")])
    await store.relations.upsert_many([rel("a", "b")])
    failing = KbChanges(
        topics_upsert=[topic("c"), topic("a", label="Renamed")],
        relations_upsert=[rel("c", "a"), rel("c", "missing")],
        relations_delete=[RelationKey(source="a", target="b", type="related_to")],
        topics_delete=["b"],
    )
    with pytest.raises(BadInputError, match="missing"):
        await store.apply_kb_changes(failing)
    assert await store.topics.ids() == {"a", "b"}
    assert (await store.topics.get("a")).label == "A"  # type: ignore[union-attr]
    assert [r.key.as_tuple() for r in await store.relations.list()] == [("a", "b", "related_to")]

    ok = KbChanges(
        topics_upsert=[topic("c"), topic("a", label="Renamed")],
        relations_upsert=[rel("c", "a", "depends_on")],
        relations_delete=[RelationKey(source="a", target="b", type="related_to")],
        topics_delete=["b"],
    )
    result = await store.apply_kb_changes(ok)
    assert result.applied
    assert result.topic_ids_upserted == ["c", "a"]
    assert result.topic_ids_deleted == ["b"]
    assert result.relations_deleted == 1
    assert await store.topics.ids() == {"a", "c"}
    assert [r.key.as_tuple() for r in await store.relations.list()] == [("c", "a", "depends_on")]


async def test_relation_to_topic_deleted_in_same_change_is_rejected(store: Store) -> None:
    await store.topics.upsert_many([topic("a"), topic("b")])
    with pytest.raises(BadInputError, match="b"):
        await store.apply_kb_changes(
            KbChanges(relations_upsert=[rel("a", "b")], topics_delete=["b"])
        )
    assert await store.topics.ids() == {"a", "b"}


async def test_chunk_merge_is_recorded_once_with_its_changes(store: Store) -> None:
    sha = "ab" * 32
    await store.sources.create(Source(id="src-1", name="handbook.md", sha256=sha))
    await store.sources.set_chunks_total("src-1", 3)
    first = await store.apply_kb_changes(
        KbChanges(topics_upsert=[topic("a")]), chunk=ChunkMark(source_id="src-1", chunk_index=0)
    )
    assert first.applied
    again = await store.apply_kb_changes(
        KbChanges(topics_upsert=[topic("zzz")]), chunk=ChunkMark(source_id="src-1", chunk_index=0)
    )
    assert not again.applied
    assert await store.topics.ids() == {"a"}  # the redelivered chunk changed nothing
    await store.apply_kb_changes(
        KbChanges(topics_upsert=[topic("c")]), chunk=ChunkMark(source_id="src-1", chunk_index=2)
    )
    assert await store.sources.merged_chunks("src-1") == {0, 2}
    assert await store.sources.first_unmerged_chunk("src-1") == 1
    source = await store.sources.get("src-1")
    assert source is not None and (source.chunks_done, source.chunks_total) == (2, 3)


async def test_failed_chunk_merge_is_not_recorded(store: Store) -> None:
    await store.sources.create(Source(id="src-2", name="x.md", sha256="cd" * 32))
    with pytest.raises(BadInputError):
        await store.apply_kb_changes(
            KbChanges(topics_upsert=[topic("a")], relations_upsert=[rel("a", "ghost")]),
            chunk=ChunkMark(source_id="src-2", chunk_index=0),
        )
    assert await store.sources.merged_chunks("src-2") == set()
    assert await store.topics.ids() == set()
    with pytest.raises(NotFoundError):
        await store.apply_kb_changes(KbChanges(), chunk=ChunkMark(source_id="nope", chunk_index=0))
