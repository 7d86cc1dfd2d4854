"""Contract of the pending-merge repository (held chunk results, pending relations)."""

from __future__ import annotations

from shared.store import PendingRelation, Relation, Store


def _pending(source_id: str, chunk: int, source: str, target: str) -> PendingRelation:
    relation = Relation(source=source, target=target, type="related_to", description="d")
    return PendingRelation(source_id=source_id, chunk_index=chunk, relation=relation)


async def test_held_chunks_keep_the_first_result_until_released(store: Store) -> None:
    repo = store.pending_merges
    assert await repo.hold("s1", 3, {"chunk_index": 3, "topics": [{"id": "a"}]})
    assert not await repo.hold("s1", 3, {"chunk_index": 3, "topics": []})  # first one wins
    assert await repo.hold("s1", 1, {"chunk_index": 1})
    assert await repo.hold("s2", 0, {"chunk_index": 0})
    assert await repo.held_indexes("s1") == [1, 3]
    held = await repo.held("s1", 3)
    assert held is not None and held.payload == {"chunk_index": 3, "topics": [{"id": "a"}]}
    assert held.held_at is not None
    assert await repo.held("s1", 2) is None
    assert await repo.release("s1", 3)
    assert not await repo.release("s1", 3)
    assert await repo.held_indexes("s1") == [1]


async def test_pending_relations_by_source_and_endpoint(store: Store) -> None:
    repo = store.pending_merges
    rows = [_pending("s1", 0, "a", "b"), _pending("s1", 2, "c", "a"), _pending("s2", 0, "d", "e")]
    assert await repo.add_relations(rows) == 3
    assert await repo.add_relations(rows[:1]) == 0  # a repeat is ignored
    assert await repo.add_relations([]) == 0
    assert [p.identity for p in await repo.relations_of("s1")] == [
        ("s1", 0, "a", "b", "related_to"), ("s1", 2, "c", "a", "related_to"),
    ]  # fmt: skip
    touching = await repo.relations_touching(["a"])
    assert sorted(p.identity for p in touching) == sorted(p.identity for p in rows[:2])
    assert [p.relation.description for p in touching] == ["d", "d"]
    assert [p.source_id for p in await repo.relations_touching(["e", "zz"])] == ["s2"]
    assert await repo.relations_touching([]) == []
    assert await repo.remove_relations(rows[:1]) == 1
    assert await repo.remove_relations(rows[:1]) == 0
    await repo.hold("s1", 4, {"x": 1})
    assert await repo.clear("s1") == (1, 1)
    assert await repo.relations_of("s1") == [] and await repo.held_indexes("s1") == []
    assert len(await repo.relations_of("s2")) == 1  # another source's rows stay


async def test_every_pending_relation_is_listed_longest_waiting_first(store: Store) -> None:
    from datetime import UTC, datetime, timedelta

    repo = store.pending_merges
    t0 = datetime(2026, 11, 1, 9, tzinfo=UTC)
    rows = [
        _pending("handbook:b.md", 0, "x", "ghost").model_copy(update={"added_at": t0}),
        _pending("s1", 1, "a", "b").model_copy(update={"added_at": t0 + timedelta(days=2)}),
        _pending("handbook:a.md", 0, "y", "ghost").model_copy(update={"added_at": t0}),
    ]
    assert await repo.all_relations() == [] and await repo.count_relations() == 0
    await repo.add_relations(rows)
    listed = await repo.all_relations()
    assert [p.source_id for p in listed] == ["handbook:a.md", "handbook:b.md", "s1"]
    assert listed[0].added_at == t0 and listed[2].added_at == t0 + timedelta(days=2)
    assert [p.source_id for p in await repo.all_relations(limit=1)] == ["handbook:a.md"]
    assert await repo.all_relations(limit=0) == []
    assert await repo.count_relations() == 3
    await repo.clear("s1")
    assert await repo.count_relations() == 2
