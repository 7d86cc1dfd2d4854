"""Contract: held changes, handbook trees, kb version, current sources, conversation refs."""

from __future__ import annotations

import asyncio
import hashlib

import pytest

from shared.errors import BadInputError
from shared.store import (
    Assertion,
    ChangeBatch,
    ConversationRef,
    HandbookTree,
    HeldChange,
    KbChanges,
    RelationKey,
    Store,
    Topic,
)

OKR = Topic(id="okr", label="OKR", type="concept")
SCRUM = Topic(id="scrum", label="Scrum", type="process")


async def test_a_held_change_is_taken_once(store: Store) -> None:
    changes = KbChanges(topics_upsert=[OKR])
    held = HeldChange(
        key="src-1:3",
        asserter="src-1",
        reason="rewrites 9 topics",
        updated_ids=["okr"],
        changes=changes,
        topics=["okr"],
        relations=[RelationKey(source="okr", target="scrum", type="related_to")],
    )
    stored = await store.held_changes.put(held)
    assert stored.created_at is not None
    await store.held_changes.put(HeldChange(key="a", asserter="admin"))
    assert [h.key for h in await store.held_changes.list()] == ["a", "src-1:3"]
    got = await store.held_changes.get("src-1:3")
    assert got is not None and got.changes == changes and got.relations == held.relations
    assert got.created_at == stored.created_at
    taken = await asyncio.gather(*(store.held_changes.take("src-1:3") for _ in range(5)))
    assert [t.key for t in taken if t is not None] == ["src-1:3"]  # exactly one taker
    assert await store.held_changes.get("src-1:3") is None
    assert await store.held_changes.take("missing") is None


async def test_handbook_trees_are_cached_per_folder(store: Store) -> None:
    assert await store.handbook_trees.get("acme/handbook@main", "docs") is None
    tree = HandbookTree(
        where="acme/handbook@main",
        path="docs",
        etag='W/"1"',
        files=[("docs/a.md", "sha-a", 10), ("docs/b.md", "sha-b", 20)],
    )
    await store.handbook_trees.put(tree)
    await store.handbook_trees.put(tree.model_copy(update={"path": "", "etag": None}))
    got = await store.handbook_trees.get("acme/handbook@main", "docs")
    assert got is not None and (got.etag, got.files) == ('W/"1"', tree.files)
    other = await store.handbook_trees.get("acme/handbook@main", "")
    assert other is not None and other.etag is None
    assert await store.handbook_trees.clear() == 2
    assert await store.handbook_trees.get("acme/handbook@main", "docs") is None


def _chain(previous: str) -> str:
    return hashlib.sha256(f"{previous}\n+".encode()).hexdigest()[:8]


async def test_kb_version_advances_atomically(store: Store) -> None:
    assert await store.kb_version.get() is None
    with pytest.raises(BadInputError, match="initial"):
        await store.kb_version.advance(_chain)
    first = await store.kb_version.advance(_chain, initial="abcd1234")
    assert first == _chain("abcd1234") and await store.kb_version.get() == first
    # Concurrent advances each chain on the one before: none is lost.
    await asyncio.gather(*(store.kb_version.advance(_chain, initial="ignored") for _ in range(10)))
    expected = first
    for _ in range(10):
        expected = _chain(expected)
    assert await store.kb_version.get() == expected
    with pytest.raises(BadInputError):
        await store.kb_version.advance(lambda _: "")
    assert await store.kb_version.get() == expected


async def test_current_source_swaps_and_clears_only_its_own(store: Store) -> None:
    assert await store.current_sources.swap("a.md", "src-1") is None
    assert await store.current_sources.swap("a.md", "src-2") == "src-1"
    assert await store.current_sources.get("a.md") == "src-2"
    assert not await store.current_sources.clear("a.md", "src-1")  # not the current one
    assert await store.current_sources.clear("a.md", "src-2")
    assert await store.current_sources.get("a.md") is None
    with pytest.raises(BadInputError):
        await store.current_sources.swap("", "src-1")


async def test_conversation_refs_and_the_personal_chat(store: Store) -> None:
    personal = ConversationRef(
        surface="teams",
        conversation_id="a:1",
        user_id="aad-1",
        reference={"conversation": {"id": "a:1"}, "serviceUrl": "u"},
    )
    channel = ConversationRef(
        surface="teams",
        conversation_id="19:c@thread",
        reference={"conversation": {"id": "19:c@thread"}},
    )
    await store.conversation_refs.put(personal)
    await store.conversation_refs.put(channel)
    got = await store.conversation_refs.get("teams", "a:1")
    assert got is not None and got.reference == personal.reference and got.updated_at
    found = await store.conversation_refs.personal("teams", "aad-1")
    assert found is not None and found.conversation_id == "a:1"
    await asyncio.sleep(0.01)
    newer = personal.model_copy(update={"conversation_id": "a:2", "reference": {"n": 2}})
    await store.conversation_refs.put(newer)
    found = await store.conversation_refs.personal("teams", "aad-1")
    assert found is not None and found.conversation_id == "a:2"  # the newest chat
    assert await store.conversation_refs.personal("slack", "aad-1") is None
    assert await store.conversation_refs.get("teams", "missing") is None
    listed = [r.conversation_id for r in await store.conversation_refs.list("teams")]
    assert listed == ["19:c@thread", "a:1", "a:2"]


async def test_change_log_records_an_outside_before_image_once(store: Store) -> None:
    batch = ChangeBatch(
        id="undo-1",
        actor="extractor",
        reason="graph analysis",
        topics_before=[OKR],
        topics_absent=["scrum"],
    )
    assert await store.change_log.record(batch)
    assert not await store.change_log.record(batch.model_copy(update={"reason": "again"}))
    got = await store.change_log.get("undo-1")
    assert got is not None and got.reason == "graph analysis" and got.topics_before == [OKR]
    assert got.created_at is not None and got.undone_at is None
    assert [b.id for b in await store.change_log.list()] == ["undo-1"]


async def test_provenance_moves_to_a_renamed_source_and_skips_missing(store: Store) -> None:
    await store.topics.upsert_many([OKR, SCRUM])
    rows = [
        Assertion(source_id="handbook:a.md", topic_id="okr"),
        Assertion(source_id="handbook:a.md", topic_id="scrum"),
        Assertion(source_id="handbook:b.md", topic_id="scrum"),
    ]
    await store.provenance.record(rows)
    with pytest.raises(BadInputError, match="do not exist"):
        await store.provenance.record([Assertion(source_id="x", topic_id="gone")])
    ghost = [Assertion(source_id="x", topic_id="gone"), Assertion(source_id="x", topic_id="okr")]
    assert await store.provenance.record(ghost, skip_missing=True) == 1
    assert await store.provenance.rename_source("handbook:a.md", "handbook:b.md") == 1
    assert await store.provenance.of_source("handbook:a.md") == []
    moved = await store.provenance.of_source("handbook:b.md")
    assert sorted(a.topic_id or "" for a in moved) == ["okr", "scrum"]
    assert await store.provenance.sources_of(["okr"]) == {"okr": ["handbook:b.md", "x"]}
    assert await store.provenance.rename_source("handbook:b.md", "handbook:b.md") == 0
