"""The full rebuild reads the store in pages and builds in steps: the same snapshot as one build."""

from __future__ import annotations

import asyncio
import random
import weakref
from pathlib import Path

import numpy as np
import pytest

from services.r42 import knowledge, rebuild
from services.r42.knowledge import KbCache, load_snapshot
from services.r42.lookup import content_text
from services.r42.snapshot import labels_of
from shared.bus import KbUpdated
from shared.kb import RetrievalIndex, build_kb_catalogue
from shared.kb.steps import Steps, releasing
from shared.store import Content, Relation, Store, Topic, open_store

WORDS = (
    "pensioen regeling pensioenregeling partner partnerpensioen verlof ouderschapsverlof "
    "fiets fietsregeling lease leaseauto kosten declaratie declaratieproces thuiswerk "
    "thuiswerkvergoeding vergoeding reis reiskosten budget team laptop zonnepanelen "
    "wezenpensioen nabestaandenpensioen zorgverlof kraamverlof reiskostenvergoeding"
).split()
QUERIES = (
    "pensioen", "verlof", "partner", "declaratie bonnen", "fiets leasen", "thuiswerken",
    "reiskosten vergoeding", "zorg", "laptop budget", "t-7", "Pensioenregeling team",
)  # fmt: skip


async def _seeded(tmp_path: Path, seed: int, n: int) -> Store:
    rng = random.Random(seed)
    store = await open_store(f"sqlite:///{tmp_path / 'kb.db'}")
    topics = [
        Topic(
            id=f"t-{i}",
            label=" ".join(rng.sample(WORDS, rng.randint(1, 3))).capitalize(),
            type="concept",
            description=" ".join(rng.choices(WORDS, k=rng.randint(0, 25))),
        )
        for i in rng.sample(range(n * 3), n)  # stored out of id order
    ]
    await store.topics.upsert_many(topics)
    ids = [t.id for t in topics]
    relations = {
        (a, b): Relation(source=a, target=b, type="related_to")
        for a, b in (rng.sample(ids, 2) for _ in range(n * 2))
    }
    await store.relations.upsert_many(relations.values())
    for topic_id in rng.sample(ids, n // 3):
        body = " ".join(rng.choices(WORDS, k=40))
        await store.content.put(Content(topic_id=topic_id, article={"body": body}))
    return store


def _slices_of(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    from shared.kb import analysis, compound, retrieval

    monkeypatch.setattr(rebuild, "PAGE_TOPICS", size)
    monkeypatch.setattr(rebuild, "PAGE_RELATIONS", size + 2)
    monkeypatch.setattr(rebuild, "SLICE_TOPICS", size)
    monkeypatch.setattr(retrieval, "SLICE_TOPICS", size)
    monkeypatch.setattr(analysis, "SLICE_WORDS", size)
    monkeypatch.setattr(compound, "SLICE_TERMS", size)


@pytest.mark.parametrize(("seed", "slice_size"), [(1, 1), (2, 3), (3, 50)])
async def test_a_paged_stepwise_rebuild_equals_one_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, slice_size: int
) -> None:
    store = await _seeded(tmp_path, seed, 60)
    try:
        _slices_of(monkeypatch, slice_size)
        snapshot = await load_snapshot(store)
        topics = await store.topics.list()
        summaries = {}
        for content in await store.content.list():
            if text := content_text(content, limit=rebuild.SUMMARY_CHARS):
                summaries[content.topic_id] = text
        built = RetrievalIndex.build(topics, summaries=summaries)
        relations = await store.relations.list()
    finally:
        await store.close()
    index = snapshot.index
    assert index.fingerprint == built.fingerprint
    assert index.topic_ids == built.topic_ids
    assert list(index.sorted_ids) == list(built.sorted_ids)
    assert list(index._vocab) == list(built._vocab)
    mine, theirs = index._postings, built._postings
    for name in ("indptr", "docs", "tf2", "lengths", "idf", "norm", "alive", "df"):
        assert np.array_equal(getattr(mine, name), getattr(theirs, name)), name
    for query in QUERIES:
        assert index.search(query, k=60) == built.search(query, k=60), query
    assert dict(snapshot.topics) == {t.id: t for t in topics}
    assert snapshot.catalogue == build_kb_catalogue(topics)
    assert snapshot.labels == labels_of(topics)
    for topic in topics:
        expected = sorted(r.as_tuple() for r in relations if topic.id in (r.source, r.target))
        among = snapshot.relations.among([topic.id, *snapshot.topics])
        got = sorted((r.source, r.target, r.type) for r in among)
        assert [k for k in got if topic.id in k[:2]] == expected


async def test_a_rebuild_after_an_update_reads_the_new_text(tmp_path: Path) -> None:
    # The index of the last full read is cached by its ids: an update that changes a
    # topic's text but no id must not let the next (periodic) rebuild bring the old back.
    store = await _seeded(tmp_path, 4, 30)
    try:
        cache = KbCache(store, max_age_s=3600)
        await cache.get()
        (first,) = await store.topics.page(limit=1)
        await store.topics.upsert_many([first.model_copy(update={"description": "kwartel"})])
        cache.update(KbUpdated(kb_hash="a", changed_ids=[first.id], reason="t", actor="t"))
        await cache.settled()
        assert [h.topic_id for h in (await cache.get()).index.search("kwartel")] == [first.id]
        updated = cache.current
        cache._max_age_s = 0.0  # the next get() rebuilds from the whole store
        await cache.get()
        await cache.settled()
        rebuilt = await cache.get()
        assert rebuilt is not updated  # a full read of the store
        assert [h.topic_id for h in rebuilt.index.search("kwartel")] == [first.id]
        await cache.aclose()
    finally:
        await store.close()


async def test_a_replaced_snapshot_is_freed_in_slices_once_no_turn_holds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for module in (knowledge, rebuild):
        monkeypatch.setattr(module, "FREEZE_MIN_TOPICS", 10)
    monkeypatch.setattr(rebuild, "RELEASE_MIN", 8)
    monkeypatch.setattr(rebuild, "RETIRE_POLL_S", 0.01)
    store = await _seeded(tmp_path, 5, 40)
    cache = KbCache(store)
    try:
        held = await cache.get()  # a turn still answering from it
        topics = dict(held.topics)
        hits = held.index.search("pensioen verlof", k=20)
        cache.invalidate()
        second = await cache.get()
        assert second is not held
        await asyncio.sleep(0.1)  # retire polls meanwhile: the turn's snapshot stays whole
        assert dict(held.topics) == topics
        assert held.index.search("pensioen verlof", k=20) == hits
        assert cache._retiring  # still waiting for the turn to let go
        released: list[object] = []

        def spy(items: list[object] | dict[object, object] | set[object]) -> Steps[None]:
            released.append(items.copy())  # a copy: the original is emptied
            yield from releasing(items)

        monkeypatch.setattr(rebuild, "releasing", spy)
        gone = weakref.ref(held)
        del held
        for _ in range(100):
            if not cache._retiring:
                break
            await asyncio.sleep(0.01)
        assert not cache._retiring
        # Emptied in slices by the retirement, not dropped at once: nothing else held them.
        assert gone() is None
        assert topics in released  # the topics map, emptied in slices
        assert sorted(topics) in [sorted(x) for x in released if isinstance(x, list)]
        assert dict(second.topics) == topics  # the new snapshot shares none of it
        assert second.index.search("pensioen verlof", k=20) == hits
    finally:
        await cache.aclose()
        await store.close()


@pytest.mark.parametrize("offload_from", [10_000, 5])
async def test_a_small_kb_is_built_and_updated_on_the_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offload_from: int
) -> None:
    """Below OFFLOAD_MIN_TOPICS no pass goes to a worker thread (the hand-offs cost more than
    the passes); from it on every one does. The snapshots are the same either way."""
    threads: list[str] = []
    real = asyncio.to_thread

    async def counting(fn: object, /, *args: object, **kwargs: object) -> object:
        threads.append(getattr(fn, "__qualname__", repr(fn)))
        return await real(fn, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(asyncio, "to_thread", counting)
    monkeypatch.setattr(knowledge, "OFFLOAD_MIN_TOPICS", offload_from)
    monkeypatch.setattr(rebuild, "OFFLOAD_MIN_TOPICS", offload_from)
    store = await _seeded(tmp_path, 7, 30)
    try:
        kb = KbCache(store)
        built = await kb.get()
        fresh = Topic(id="t-new", label="Fietsregeling", type="concept", description="lease")
        await store.topics.upsert_many([fresh])
        kb.update(KbUpdated(kb_hash="x", changed_ids=["t-new"], reason="test", actor="test"))
        await kb.settled()
        updated = await kb.get()
        await kb.aclose()
    finally:
        await store.close()
    assert len(built.topics) == 30 and "t-new" in updated.topics
    assert updated.index.search("fietsregeling", k=1)[0].topic_id == "t-new"
    if offload_from > 30:
        assert threads == []
    else:
        assert threads  # the build's and the update's numpy passes
