"""A differing extraction of a curated field becomes a suggestion; approving it applies it."""

from __future__ import annotations

from pathlib import Path

from services.extractor.curation import CURATED_FIELD
from services.extractor.deltas import apply_decision
from services.extractor.merge import merge_chunk
from shared.bus import ChunkExtracted, Event, KbDelta, KbDeltaDecided
from shared.bus import Topic as BusTopic
from shared.store import Source, Store, Topic, open_store

ADMINS = frozenset({"ADMIN"})


async def _store(tmp_path: Path) -> Store:
    store = await open_store(f"sqlite:///{tmp_path / 'kb.db'}")
    await store.topics.upsert_many([Topic(id="verlof", label="Verlof", type="concept",
                                          description="Door een admin geschreven.")])  # fmt: skip
    await store.curation.mark("verlof", ["description"], by="ADMIN")
    for sid in ("src-1", "src-2"):
        await store.sources.create(Source(id=sid, name=f"{sid}.md", sha256=sid[-1] * 64))
        await store.sources.set_status(sid, "processing")
        await store.sources.set_chunks_total(sid, 1)
    return store


def _chunk(source_id: str, description: str) -> ChunkExtracted:
    topic = BusTopic(id="verlof", label="Verlof", type="concept", description=description)
    return ChunkExtracted(source_id=source_id, chunk_index=0, chunk_count=1, topics=[topic],
                          prompt_version="t", actor="extractor")  # fmt: skip


async def test_a_differing_curated_field_waits_for_an_admin(tmp_path: Path) -> None:
    store = await _store(tmp_path)
    published: list[Event] = []

    async def publish(event: Event) -> None:
        published.append(event)

    try:
        await merge_chunk(store=store, event=_chunk("src-1", "Volgens het handboek."),
                          publish=publish)  # fmt: skip
        topic = await store.topics.get("verlof")
        assert topic is not None and topic.description == "Door een admin geschreven."
        [suggestion] = await store.suggestions.list(status="pending")
        assert suggestion.context["kind"] == CURATED_FIELD
        assert suggestion.context["field"] == "description"
        assert suggestion.context["curated"] == "Door een admin geschreven."
        assert suggestion.context["extracted"] == "Volgens het handboek."
        assert suggestion.delta["topics"][0]["description"] == "Volgens het handboek."
        # The same value from another source (or a redelivery) is not suggested twice.
        await merge_chunk(store=store, event=_chunk("src-2", "Volgens het handboek."),
                          publish=publish)  # fmt: skip
        assert len(await store.suggestions.list()) == 1
        decision = KbDeltaDecided(
            suggestion_id=suggestion.id, decision="approved", decided_by="ADMIN",
            delta=KbDelta(reason="ok"), actor="gateway",
        )  # fmt: skip
        outcome = await apply_decision(store=store, event=decision, publish=publish,
                                       is_admin=ADMINS.__contains__)  # fmt: skip
        assert outcome == "applied"
        topic = await store.topics.get("verlof")
        assert topic is not None and topic.description == "Volgens het handboek."
        # The approved value is the admin's now: a later extraction does not overwrite it.
        assert [m.field for m in (await store.curation.of(["verlof"]))["verlof"]] == ["description"]
        again = await apply_decision(store=store, event=decision, publish=publish,
                                     is_admin=ADMINS.__contains__)  # fmt: skip
        assert again == "already_decided"
        assert [e.subject for e in published].count("kb.updated") >= 1
    finally:
        await store.close()


async def test_a_rejected_field_suggestion_keeps_the_admins_value(tmp_path: Path) -> None:
    store = await _store(tmp_path)

    async def publish(event: Event) -> None:
        del event

    try:
        await merge_chunk(store=store, event=_chunk("src-1", "Anders."), publish=publish)
        [suggestion] = await store.suggestions.list(status="pending")
        decision = KbDeltaDecided(
            suggestion_id=suggestion.id, decision="rejected", decided_by="ADMIN",
            delta=KbDelta(reason="nee"), actor="gateway",
        )  # fmt: skip
        assert await apply_decision(store=store, event=decision, publish=publish,
                                    is_admin=ADMINS.__contains__) == "rejected"  # fmt: skip
        topic = await store.topics.get("verlof")
        assert topic is not None and topic.description == "Door een admin geschreven."
    finally:
        await store.close()
