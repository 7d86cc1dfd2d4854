"""Tombstones on the KG owner: what an extraction drops, and who lifts a tombstone."""

from __future__ import annotations

from services.extractor.kb_import import import_graph
from services.extractor.tombstones import bury, without_tombstoned
from shared.bus import Event
from shared.bus.events import ExtractedRelation
from shared.bus.events import Topic as BusTopic
from shared.store import Store, Topic


def bus_topic(tid: str, label: str) -> BusTopic:
    return BusTopic(id=tid, label=label, type="concept", description=f"Over {label}.")


async def test_an_extraction_drops_a_deleted_topic_by_id_or_label_and_its_relations(
    store: Store,
) -> None:
    await bury(store, Topic(id="verlof", label="Verlof", type="concept"), by="U1", undo_id="u-1")
    topics = [bus_topic("verlof-regeling", "Verlof"), bus_topic("ziekte", "Ziekte"),
              bus_topic("verlof", "Vakantie")]  # fmt: skip
    relations = [
        ExtractedRelation(source="ziekte", target="verlof", type="related_to"),
        ExtractedRelation(source="ziekte", target="verlof-regeling", type="related_to"),
        ExtractedRelation(source="ziekte", target="arbo", type="related_to"),
    ]
    out = await without_tombstoned(store, topics, relations)
    assert [t.id for t in out.topics] == ["ziekte"]
    assert [(r.source, r.target) for r in out.relations] == [("ziekte", "arbo")]
    assert out.skipped == ("verlof",)
    untouched = await without_tombstoned(store, topics[1:2], relations[2:])
    assert (untouched.topics, untouched.relations, untouched.skipped) == (
        topics[1:2], relations[2:], ()
    )  # fmt: skip


async def test_an_import_recreates_a_deleted_topic_on_purpose(store: Store) -> None:
    await bury(store, Topic(id="verlof", label="Verlof", type="concept"), by="U1", undo_id="u-1")
    published: list[Event] = []

    async def publish(event: Event) -> None:
        published.append(event)

    doc = {"topics": [{"id": "verlof", "label": "Verlof", "type": "concept"}], "relations": []}
    await import_graph(store=store, doc=doc, skip_invalid=False, publish=publish)
    assert await store.tombstones.get_many(["verlof"]) == {}
    assert await store.topics.get("verlof") is not None
