"""Contract: keyset pages of topics and relations, on every adapter."""

from __future__ import annotations

import pytest

from shared.errors import BadInputError
from shared.store import Relation, RelationKey, Store, Topic


def topic(tid: str) -> Topic:
    return Topic.model_validate({"id": tid, "label": tid.replace("-", " "), "type": "concept"})


def rel(source: str, target: str, type_: str = "related_to") -> Relation:
    return Relation.model_validate({"source": source, "target": target, "type": type_})


async def _all_topic_pages(store: Store, limit: int) -> list[list[str]]:
    pages: list[list[str]] = []
    after: str | None = None
    while page := await store.topics.page(after_id=after, limit=limit):
        pages.append([t.id for t in page])
        after = page[-1].id
    return pages


async def test_topic_pages_cover_every_topic_once_in_id_order(store: Store) -> None:
    ids = ["b-2", "a", "c-10", "c-9", "a-b", "z", "b-10", "b"]
    await store.topics.upsert_many([topic(i) for i in ids])
    pages = await _all_topic_pages(store, 3)
    assert [len(p) for p in pages] == [3, 3, 2]
    assert [i for p in pages for i in p] == sorted(ids)
    assert [t.id for t in await store.topics.page()] == sorted(ids)
    listed = await store.topics.list()
    paged = [t for p in [await store.topics.page(limit=100)] for t in p]
    assert paged == listed  # whole topics, as list() gives them
    # An id that is not stored starts the page after where it would sort.
    assert [t.id for t in await store.topics.page(after_id="b-1", limit=2)] == ["b-10", "b-2"]
    assert await store.topics.page(after_id="z") == []


async def test_topic_pages_read_while_the_graph_changes(store: Store) -> None:
    await store.topics.upsert_many([topic(i) for i in ["a", "c", "e", "g"]])
    first = await store.topics.page(limit=2)
    assert [t.id for t in first] == ["a", "c"]
    # Written between two pages: ahead of the cursor it is read, behind it it is not.
    await store.topics.upsert_many([topic("b"), topic("f")])
    await store.topics.delete_many(["e"])
    rest = await store.topics.page(after_id=first[-1].id, limit=10)
    assert [t.id for t in rest] == ["f", "g"]


async def test_relation_pages_cover_every_relation_once_in_key_order(store: Store) -> None:
    await store.topics.upsert_many([topic(i) for i in ["a", "b", "c", "d"]])
    relations = [
        rel("a", "b"), rel("a", "b", "part_of"), rel("a", "b", "depends_on"), rel("a", "c"),
        rel("b", "a"), rel("c", "d", "executed_by"), rel("d", "a"),
    ]  # fmt: skip
    await store.relations.upsert_many(relations)
    keys: list[tuple[str, str, str]] = []
    after: RelationKey | None = None
    while page := await store.relations.page(after=after, limit=2):
        assert len(page) <= 2
        keys += [r.as_tuple() for r in page]
        after = page[-1]
    assert keys == sorted(r.as_tuple() for r in relations)
    assert await store.relations.page(limit=100) == await store.relations.list()
    # A key that is not stored starts the page after where it would sort.
    middle = RelationKey(source="a", target="b", type="executed_by")
    assert [r.as_tuple() for r in await store.relations.page(after=middle, limit=2)] == [
        ("a", "b", "part_of"),
        ("a", "b", "related_to"),
    ]
    last = RelationKey(source="d", target="a", type="related_to")
    assert await store.relations.page(after=last) == []


@pytest.mark.parametrize("limit", [0, -1, 10_001, True, 2.5, "5", None])
async def test_a_bad_page_size_is_refused(store: Store, limit: object) -> None:
    await store.topics.upsert_many([topic("a")])
    with pytest.raises(BadInputError, match="page size"):
        await store.topics.page(limit=limit)  # type: ignore[arg-type]
    with pytest.raises(BadInputError, match="page size"):
        await store.relations.page(limit=limit)  # type: ignore[arg-type]


async def test_a_bad_cursor_is_refused(store: Store) -> None:
    with pytest.raises(BadInputError, match="after_id"):
        await store.topics.page(after_id=5)  # type: ignore[arg-type]
    with pytest.raises(BadInputError, match="RelationKey"):
        await store.relations.page(after=("a", "b", "related_to"))  # type: ignore[arg-type]
