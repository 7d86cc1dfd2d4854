"""Merges are order-independent: any delivery order and redelivery give the in-order graph."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from services.extractor.merge import merge_chunk
from services.extractor.provenance import assertions_of
from shared.bus import ChunkExtracted, Event, ExtractedRelation, SourceCompleted
from shared.bus import Topic as BusTopic
from shared.store import Source, Store, open_store

SOURCE = "src-order"
N = 6


def _t(tid: str, description: str, label: str | None = None) -> BusTopic:
    return BusTopic(id=tid, label=label or tid.replace("-", " ").title(), type="concept",
                    description=description, learning_relevance="standard")  # fmt: skip


def _r(source: str, target: str, kind: str = "related_to") -> ExtractedRelation:
    return ExtractedRelation(source=source, target=target, type=kind)  # type: ignore[arg-type]


def chunk_events() -> list[ChunkExtracted]:
    """Six chunks whose results overlap the way a real document's do."""
    per_chunk: list[tuple[list[BusTopic], list[ExtractedRelation]]] = [
        # a relation to a topic only chunk 4 introduces (a forward reference)
        ([_t("verlof", "Verlof in het kort."), _t("werknemer", "Wie hier werkt.")],
         [_r("verlof", "werknemer"), _r("verlof", "ouderschapsverlof", "part_of")]),
        # the same topic again, described differently: the later chunk's text wins in order
        ([_t("werknemer", "Iedereen met een contract."), _t("salaris", "Het loon.")],
         [_r("salaris", "werknemer", "depends_on")]),
        # a re-coined id for an existing label merges into the stored topic
        ([_t("medewerker", "Een collega.", label="Werknemer"), _t("bonus", "Extra loon.")],
         [_r("bonus", "salaris", "part_of"), _r("medewerker", "bonus")]),
        # a relation to a topic no chunk ever introduces: dropped when the source completes
        ([_t("declaraties", "Kosten terugvragen.")], [_r("declaraties", "nergens")]),
        ([_t("ouderschapsverlof", "Verlof voor ouders.")],
         [_r("ouderschapsverlof", "werknemer", "executed_by")]),
        ([_t("verlof", "")], [_r("declaraties", "salaris")]),
    ]  # fmt: skip
    return [
        ChunkExtracted(source_id=SOURCE, chunk_index=i, chunk_count=N, topics=topics,
                       relations=relations, prompt_version="test-1", actor="extractor")
        for i, (topics, relations) in enumerate(per_chunk)
    ]  # fmt: skip


async def _graph(store: Store) -> dict[str, Any]:
    topics = await store.topics.list()
    relations = await store.relations.list()
    record = await assertions_of(store, SOURCE)
    return {
        "topics": sorted((t.id, t.label, t.type, t.description, t.learning_relevance,
                          t.metadata.model_dump(exclude_none=True)) for t in topics),
        "relations": sorted((r.source, r.target, r.type, r.description) for r in relations),
        "asserted": (sorted(record.topics), sorted(record.relations)),
        "pending": await store.pending_merges.relations_of(SOURCE),
        "held": await store.pending_merges.held_indexes(SOURCE),
    }  # fmt: skip


async def _run(tmp_path: Path, name: str, order: list[int]) -> tuple[dict[str, Any], list[Event]]:
    store = await open_store(f"sqlite:///{tmp_path / f'{name}.db'}")
    published: list[Event] = []

    async def publish(event: Event) -> None:
        published.append(event)

    try:
        await store.sources.create(Source(id=SOURCE, name="handboek.md", sha256="a" * 64))
        await store.sources.set_status(SOURCE, "processing")
        await store.sources.set_chunks_total(SOURCE, N)
        events = chunk_events()
        for index in order:
            await merge_chunk(store=store, event=events[index], publish=publish)
        source = await store.sources.get(SOURCE)
        assert source is not None and source.status == "completed", (order, source)
        return await _graph(store), published
    finally:
        await store.close()


def _completed(published: list[Event]) -> SourceCompleted:
    done = [e for e in published if isinstance(e, SourceCompleted)]
    assert len({e.event_id for e in done}) == 1, "completed announced under one id"
    return done[0]


async def test_every_delivery_order_gives_the_in_order_graph(tmp_path: Path) -> None:
    baseline, published = await _run(tmp_path, "in-order", list(range(N)))
    rng = random.Random(42)
    orders = [list(reversed(range(N))), [3, 0, 5, 1, 4, 2]]
    orders += [rng.sample(range(N), N) for _ in range(4)]
    # A crash redelivers: chunk 2 late, and duplicates both before and after their merge.
    orders += [[0, 1, 3, 4, 1, 5, 4, 2, 3, 0], [5, 5, 4, 0, 0, 3, 2, 1, 2]]
    for i, order in enumerate(orders):
        graph, events = await _run(tmp_path, f"order-{i}", order)
        assert graph == baseline, f"delivery order {order} gave a different graph"
        assert _completed(events).model_dump(include={"relations_added", "relations_dropped",
                                                      "topics_added"}) == \
            _completed(published).model_dump(include={"relations_added", "relations_dropped",
                                                      "topics_added"}), order  # fmt: skip
    # What the baseline itself holds: the forward reference was applied, not dropped; the
    # relation to a topic that never came was dropped and counted; nothing is left waiting.
    relations = {(s, t, k) for s, t, k, _ in baseline["relations"]}
    assert ("verlof", "ouderschapsverlof", "part_of") in relations
    assert not any("nergens" in key for key in relations)
    assert baseline["pending"] == [] and baseline["held"] == []
    done = _completed(published)
    assert done.relations_dropped == 1
    assert done.relations_added == len(relations)
    assert ("werknemer", "Werknemer", "concept", "Een collega.") in [
        t[:4] for t in baseline["topics"]
    ]
    assert "medewerker" not in {t[0] for t in baseline["topics"]}


async def test_a_chunk_ahead_of_its_predecessor_is_held_not_merged(tmp_path: Path) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'held.db'}")
    published: list[Event] = []

    async def publish(event: Event) -> None:
        published.append(event)

    try:
        await store.sources.create(Source(id=SOURCE, name="handboek.md", sha256="a" * 64))
        await store.sources.set_status(SOURCE, "processing")
        await store.sources.set_chunks_total(SOURCE, N)
        events = chunk_events()
        outcome = await merge_chunk(store=store, event=events[3], publish=publish)
        assert outcome.held and not outcome.applied
        assert await store.pending_merges.held_indexes(SOURCE) == [3]
        assert await store.topics.get("declaraties") is None  # not applied out of order
        assert await store.sources.merged_chunks(SOURCE) == set()
        for index in (0, 1):
            await merge_chunk(store=store, event=events[index], publish=publish)
        assert await store.sources.merged_chunks(SOURCE) == {0, 1}
        # Chunk 2 arrives: it and the held chunk 3 merge, in order, in this one delivery.
        outcome = await merge_chunk(store=store, event=events[2], publish=publish)
        assert outcome.applied and not outcome.completed
        assert await store.sources.merged_chunks(SOURCE) == {0, 1, 2, 3}
        assert await store.pending_merges.held_indexes(SOURCE) == []
        pending = await store.pending_merges.relations_of(SOURCE)
        keys = [p.relation.key.as_tuple() for p in pending]
        assert keys == [("verlof", "ouderschapsverlof", "part_of"),
                        ("declaraties", "nergens", "related_to")]  # fmt: skip
    finally:
        await store.close()


async def test_pending_relation_of_one_source_is_applied_by_another(tmp_path: Path) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'cross.db'}")

    async def publish(event: Event) -> None:
        del event

    try:
        for sid, total in (("src-a", 2), ("src-b", 1)):
            await store.sources.create(Source(id=sid, name=f"{sid}.md", sha256=sid[-1] * 64))
            await store.sources.set_status(sid, "processing")
            await store.sources.set_chunks_total(sid, total)
        first = ChunkExtracted(source_id="src-a", chunk_index=0, chunk_count=2,
                               topics=[_t("onboarding", "De eerste week.")],
                               relations=[_r("onboarding", "buddy", "depends_on")],
                               prompt_version="t", actor="extractor")  # fmt: skip
        await merge_chunk(store=store, event=first, publish=publish)
        other = ChunkExtracted(
            source_id="src-b",
            chunk_index=0,
            chunk_count=1,
            topics=[_t("buddy", "Een vaste collega.")],
            prompt_version="t",
            actor="extractor",
        )
        await merge_chunk(store=store, event=other, publish=publish)
        assert [r.target for r in await store.relations.list(topic_id="onboarding")] == ["buddy"]
        assert await store.pending_merges.relations_of("src-a") == []
        asserted = await assertions_of(store, "src-a")
        assert ("onboarding", "buddy", "depends_on") in asserted.relations
        progress = await store.merge_progress.get("src-a")
        assert progress.relations_added == 1
    finally:
        await store.close()
