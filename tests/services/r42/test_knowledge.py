"""The KB snapshot cache, content text, the context block, and the offline stand-ins."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from services.r42.knowledge import KbCache, load_snapshot, turn_context
from services.r42.lookup import content_text
from services.r42.offline import lookup_target, missing_topic_delta, plan_step
from services.r42.prompts import GREETING, not_in_kb
from services.r42.turn import chat_turn
from shared.bus import ChatRequest, KbUpdated
from shared.errors import StoreUnavailableError
from shared.kb import validate_delta
from shared.llm import LLMRuntime, MemorySink
from shared.store import Content, Relation, RelationKey, Store, Topic
from tests.services.r42.conftest import VERLOF_ARTICLE, WAIT


async def test_snapshot_is_cached_until_invalidated(store: Store) -> None:
    cache = KbCache(store)
    first = await cache.get()
    assert await cache.get() is first
    await store.topics.upsert_many([Topic(id="nieuw", label="Nieuw", type="concept")])
    assert "nieuw" not in (await cache.get()).topics  # no kb.updated yet: still cached
    cache.invalidate()
    second = await cache.get()
    assert second is not first and "nieuw" in second.topics
    assert second.kb_hash != first.kb_hash
    await cache.aclose()


async def test_description_changes_are_picked_up_although_the_hash_is_the_same(
    store: Store,
) -> None:
    cache = KbCache(store)
    first = await cache.get()
    await store.topics.upsert_many(
        [Topic(id="verlof", label="Verlof", type="process", description="Nu via Workday.")]
    )
    cache.invalidate()
    second = await cache.get()
    assert second.kb_hash == first.kb_hash
    assert second.topics["verlof"].description == "Nu via Workday."
    assert [h.topic_id for h in second.index.search("workday", k=3)] == ["verlof"]


async def test_old_snapshots_are_rebuilt_in_the_background(store: Store) -> None:
    cache = KbCache(store, max_age_s=0.0)
    first = await cache.get()
    assert await cache.get() is first  # an old snapshot is still answered from at once
    async with asyncio.timeout(WAIT):
        while cache.current is first:  # noqa: ASYNC110 - the cache has no change hook
            await asyncio.sleep(0.01)
    await cache.aclose()


def _updated(changed: Sequence[str] = (), removed: Sequence[str] = ()) -> KbUpdated:
    return KbUpdated(kb_hash="v2", changed_ids=list(changed), removed_ids=list(removed),
                     reason="test", actor="extractor")  # fmt: skip


async def test_kb_updated_is_applied_without_reading_the_whole_store(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = KbCache(store)
    first = await cache.get()

    async def no_full_read(**_: object) -> list[Topic]:
        raise AssertionError("an update must not read every topic")

    monkeypatch.setattr(store.topics, "list", no_full_read)
    monkeypatch.setattr(store.topics, "page", no_full_read)
    await store.topics.upsert_many([
        Topic(id="fietsregeling", label="Fietsregeling", type="concept",
              description="Lease een fiets via je brutosalaris."),
        Topic(id="verlof", label="Verlof", type="process", description="Nu via Workday."),
    ])  # fmt: skip
    await store.relations.upsert_many(
        [Relation(source="fietsregeling", target="declaraties", type="related_to")]
    )
    await store.relations.delete_many(
        [RelationKey(source="declaraties", target="radicale-transparantie", type="related_to")]
    )
    await store.topics.delete_many(["radicale-transparantie"])
    cache.update(_updated(["fietsregeling", "verlof", "declaraties"], ["radicale-transparantie"]))
    assert cache.current is first  # applied in the background
    assert await cache.get() is first  # a turn meanwhile answers from the previous snapshot
    await cache.settled()
    second = await cache.get()
    assert second is not first and cache.current is second
    assert "radicale-transparantie" not in second.topics
    assert second.topics["verlof"].description == "Nu via Workday."
    assert [h.topic_id for h in second.index.search("fiets leasen", k=3)] == ["fietsregeling"]
    assert [h.topic_id for h in second.index.search("workday", k=3)] == ["verlof"]
    assert all(h.topic_id != "radicale-transparantie"
               for h in second.index.search("radicale transparantie"))  # fmt: skip
    among = second.relations.among(["fietsregeling", "declaraties", "radicale-transparantie"])
    assert [(r.source, r.target) for r in among] == [("fietsregeling", "declaraties")]
    assert (
        "[fietsregeling]" in second.catalogue and "radicale-transparantie" not in second.catalogue
    )
    assert second.labels["fietsregeling"] == "fietsregeling"
    # The first snapshot is untouched: a turn holding it sees one version throughout.
    assert "radicale-transparantie" in first.topics and "fietsregeling" not in first.topics
    await cache.aclose()


async def test_only_an_empty_snapshot_waits_for_an_update_in_flight(store: Store) -> None:
    cache = KbCache(store)
    known = [topic.id for topic in await store.topics.list()]
    await store.topics.delete_many(known)
    empty = await cache.get()
    assert not empty.topics
    await store.topics.upsert_many([Topic(id="nieuw", label="Nieuw", type="concept")])
    cache.update(_updated(["nieuw"]))
    # Nothing to answer from: this turn waits for the update (and gets it).
    assert "nieuw" in (await cache.get()).topics
    await cache.aclose()


async def test_a_big_or_cut_short_update_rebuilds_the_snapshot(store: Store) -> None:
    cache = KbCache(store)
    first = await cache.get()
    # Not listed in the event: only a full read of the store can find it.
    await store.topics.upsert_many([Topic(id="nieuw", label="Nieuw", type="concept")])
    cache.update(_updated([f"t-{i}" for i in range(500)]))  # the writer's cap: maybe cut short
    await cache.settled()
    second = await cache.get()
    assert second is not first and "nieuw" in second.topics
    await store.topics.upsert_many([Topic(id="ander", label="Ander", type="concept")])
    cache.update(_updated([f"t-{i}" for i in range(100)]))  # over a quarter of the KB
    await cache.settled()
    third = await cache.get()
    assert third is not second and "ander" in third.topics
    await cache.aclose()


async def test_slow_or_failing_rebuilds_fall_back_to_the_previous_snapshot(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = KbCache(store, fresh_wait_s=0.01)
    first = await cache.get()
    release = asyncio.Event()
    original = store.topics.page

    async def slow_page(**kw: object) -> list[Topic]:
        await release.wait()
        return await original(**kw)  # type: ignore[arg-type]

    monkeypatch.setattr(store.topics, "page", slow_page)
    cache.invalidate()
    assert await cache.get() is first  # the rebuild is still running
    release.set()
    async with asyncio.timeout(WAIT):
        while (await cache.get()) is first:  # noqa: ASYNC110 - the cache has no change hook
            await asyncio.sleep(0.01)

    async def broken(**_: object) -> list[Topic]:
        raise StoreUnavailableError("locked")

    monkeypatch.setattr(store.topics, "page", broken)
    cache.invalidate()
    current = cache.current
    assert current is not None and await cache.get() is current
    await cache.aclose()


async def test_content_summaries_are_indexed_and_excerpted(store: Store) -> None:
    await store.content.put(
        Content(topic_id="onboarding-buddy", article={"title": "x", "body": "De lunchwandeling."})
    )
    snapshot = await load_snapshot(store)
    hits = snapshot.index.search("lunchwandeling", k=3)
    assert [h.topic_id for h in hits] == ["onboarding-buddy"]
    context = await turn_context(store=store, snapshot=snapshot, question="Hoe werkt verlof?")
    assert context.topic_ids[0] == "verlof"
    assert "Open het HR-portaal" in context.text  # the content excerpt of the top topic
    assert context.token_estimate > 0 and context.kb_hash == snapshot.kb_hash


def test_content_text_reads_prose_and_skips_layout() -> None:
    text = content_text(Content(topic_id="verlof", article=VERLOF_ARTICLE), limit=10_000)
    assert text.splitlines() == [
        "Verlof aanvragen", "Zo werkt het", "Open het HR-portaal en kies 'verlof aanvragen'.",
        "Bijzonder verlof", "Voor ouderschapsverlof geldt een aparte regeling.",
    ]  # fmt: skip
    assert len(content_text(Content(topic_id="v", article=VERLOF_ARTICLE), limit=20)) == 20
    assert content_text(None, limit=100) == ""
    slides_only = Content(topic_id="v", slides={"slides": [{"title": "Dia", "bullets": ["a"]}]})
    assert content_text(slides_only, limit=100) == "Dia\na"


# -- offline stand-ins -------------------------------------------------------------------------


async def test_missing_role_becomes_a_valid_delta(store: Store) -> None:
    snapshot = await load_snapshot(store)
    delta = missing_topic_delta(
        "Hé, er is een rol 'Scrum master' die de sprint review begeleidt.", snapshot
    )
    assert delta is not None
    assert delta["topics"][0] == {
        "id": "scrum-master", "label": "Scrum master", "type": "role",
        "description": "Rol die de sprint review begeleidt.",
    }  # fmt: skip
    assert delta["relations"] == [
        {"source": "sprint-review", "target": "scrum-master", "type": "executed_by"}
    ]
    assert validate_delta(delta, snapshot.topics) is not None
    assert missing_topic_delta("Wat doet de product owner?", snapshot) is None
    process = missing_topic_delta("er bestaat een proces Retro die elke sprint plaatsvindt", None)
    assert process is not None and process["topics"][0]["type"] == "process"


async def test_lookup_targets_named_topics_then_unknown_ids(store: Store) -> None:
    snapshot = await load_snapshot(store)
    question = "Wat is het verschil tussen verlof en foo-bar?"
    assert lookup_target(question, snapshot, set()) == "verlof"
    assert lookup_target(question, snapshot, {"verlof"}) == "foo-bar"
    assert lookup_target(question, snapshot, {"verlof", "foo-bar"}) is None
    call = {"type": "tool_use", "id": "t", "name": "lookup_topic", "input": {"id": "verlof"}}
    messages = [{"role": "assistant", "content": [call]}]
    assert plan_step(question=question, snapshot=snapshot, messages=messages) == {
        "type": "tool", "name": "lookup_topic",
    }  # fmt: skip
    assert plan_step(question="hallo", snapshot=snapshot, messages=[]) == {"type": "none"}


async def test_offline_turns_are_grounded_and_deterministic(
    store: Store, kb: KbCache, offline_r42: LLMRuntime
) -> None:
    offline_llm = offline_r42
    ask = "Hoe vraag ik verlof aan?"
    first = await chat_turn(store=store, kb=kb, request=ChatRequest(user_id="U1", text=ask))
    second = await chat_turn(store=store, kb=kb, request=ChatRequest(user_id="U2", text=ask))
    assert first.offline and first.text == second.text
    assert first.text == (
        "[offline] Verlof: Verlof vraag je aan in het HR-portaal, minimaal twee weken vooraf; "
        "je teamlead keurt het goed."
    )
    assert [s.id for s in first.sources] == ["verlof"]
    assert isinstance(offline_llm.sink, MemorySink)
    assert [r.task for r in offline_llm.sink.records] == ["r42.chat"] * 4  # lookup + answer, twice

    off_topic = ChatRequest(user_id="U1", text="Wat is de hoofdstad van Frankrijk?")
    unknown = await chat_turn(store=store, kb=kb, request=off_topic)
    assert unknown.text == "[offline] " + not_in_kb("nl") and unknown.sources == []
    assert unknown.kb_miss and not first.kb_miss
    english = ChatRequest(user_id="U1", text="What is the capital of France?")
    unknown_en = await chat_turn(store=store, kb=kb, request=english)
    assert unknown_en.text == "[offline] " + not_in_kb("en") and unknown_en.language == "en"
    hello = await chat_turn(store=store, kb=kb, request=ChatRequest(user_id="U1", text="hallo?"))
    assert hello.text == "[offline] " + GREETING and not hello.kb_miss  # small talk is no gap

    role = await chat_turn(
        store=store, kb=kb,
        request=ChatRequest(user_id="U1", text="er is een rol Agile coach die teams begeleidt"),
    )  # fmt: skip
    assert role.proposal is not None and role.proposal.delta.topics[0].id == "agile-coach"
    assert role.text.startswith("[offline] Dank je") and role.proposal.summary in role.text
