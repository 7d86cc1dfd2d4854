"""Stale content: older prompt versions, changed and removed topics, regeneration."""

from __future__ import annotations

import pytest

from services.content.generate import ensure_content
from services.content.offline import offline_plans
from services.content.prompts import PROMPT_VERSION, is_older
from services.content.stale import find_stale, mark_stale_content, on_kb_updated, regenerate
from services.content.topics import get_topic
from shared.llm import LLMRuntime, MemorySink, OfflineProvider
from shared.store import Store, Topic
from tests.services.content.conftest import ARTICLE

TOPIC = "radicale-transparantie"


@pytest.fixture
def offline(offline_llm: LLMRuntime) -> MemorySink:
    offline_llm.provider = OfflineProvider(offline_plans())
    assert isinstance(offline_llm.sink, MemorySink)
    return offline_llm.sink


async def generate(store: Store, topic_id: str, content_type: str = "all") -> None:
    topic = await get_topic(store, topic_id)
    assert topic is not None
    await ensure_content(store, topic=topic, content_type=content_type)


@pytest.mark.parametrize(
    ("version", "older"),
    [("content-v0", True), (PROMPT_VERSION, False), ("content-v99", False), (None, True),
     ("handwritten", True)],
)  # fmt: skip
def test_is_older(version: str | None, older: bool) -> None:
    assert is_older(version) is older


async def test_content_from_an_older_prompt_version_is_stale(
    store: Store, offline: MemorySink
) -> None:
    topic = await get_topic(store, TOPIC)
    assert topic is not None
    meta = {"prompt_version": "content-v0", "topic_fingerprint": topic.fingerprint}
    await store.content.set_part(
        TOPIC, "article", {**ARTICLE, "meta": meta},
        prompt_version="content-v0", topic_fingerprint=topic.fingerprint,
    )  # fmt: skip
    items = await find_stale(store)
    assert [(i.topic_id, i.kind) for i in items] == [(TOPIC, "article")]
    assert items[0].reasons == (f"made with prompt content-v0, current is {PROMPT_VERSION}",)
    assert await store.content.list_stale() == []  # find_stale only reads

    assert await mark_stale_content(store) == items
    assert await store.content.list_stale() == [TOPIC]

    # Asking for it regenerates the stale part without force.
    outcome = await ensure_content(store, topic=topic, content_type="article")
    assert outcome.generated == ("article",)
    assert await find_stale(store) == [] and await store.content.list_stale() == []


async def test_a_newer_prompt_version_is_not_stale(store: Store, offline: MemorySink) -> None:
    topic = await get_topic(store, TOPIC)
    assert topic is not None
    meta = {"prompt_version": "content-v99", "topic_fingerprint": topic.fingerprint}
    await store.content.set_part(
        TOPIC, "article", {**ARTICLE, "meta": meta},
        prompt_version="content-v99", topic_fingerprint=topic.fingerprint,
    )  # fmt: skip
    assert await find_stale(store) == []


async def test_kb_updated_marks_changed_topics_only(store: Store, offline: MemorySink) -> None:
    await generate(store, TOPIC)
    await generate(store, "verlof", "article")
    calls = len(offline.records)
    changed = await store.topics.get(TOPIC)
    assert changed is not None
    await store.topics.upsert_many([changed.model_copy(update={"description": "Nieuw."})])

    flagged = await on_kb_updated(store, changed_ids=[TOPIC, "verlof", "lunchmenu"])
    assert flagged == [TOPIC]
    assert await store.content.list_stale() == [TOPIC]
    items = await find_stale(store)
    assert {(i.topic_id, i.kind) for i in items} == {
        (TOPIC, "article"), (TOPIC, "slides"), (TOPIC, "infographic"),
    }  # fmt: skip
    assert all(i.reasons == ("the topic changed since generation",) for i in items)
    assert len(offline.records) == calls  # marking never calls the model

    # A repeated kb.updated changes nothing new; an empty change list checks everything.
    assert await on_kb_updated(store, changed_ids=[]) == [TOPIC]


async def test_a_removed_topic_marks_its_content_stale(store: Store, offline: MemorySink) -> None:
    await generate(store, "verlof", "article")
    await store.topics.delete_many(["verlof"])
    assert await on_kb_updated(store, changed_ids=["verlof"]) == ["verlof"]
    items = await find_stale(store)
    assert [(i.topic_id, i.reasons) for i in items] == [("verlof", ("the topic no longer exists",))]
    (result,) = await regenerate(store, stale_only=True)
    assert result.topic_id == "verlof" and result.error


async def test_regenerate_stale_and_explicit_topics(store: Store, offline: MemorySink) -> None:
    await generate(store, TOPIC)
    await generate(store, "verlof", "slides")
    changed = await store.topics.get(TOPIC)
    assert changed is not None
    await store.topics.upsert_many([changed.model_copy(update={"label": "Open boek"})])
    await on_kb_updated(store, changed_ids=[TOPIC])

    results = await regenerate(store, stale_only=True)
    assert [(r.topic_id, r.kinds, r.error) for r in results] == [
        (TOPIC, ("article", "slides", "infographic"), None)
    ]
    assert await find_stale(store) == []
    stored = await store.content.get(TOPIC)
    assert stored is not None and "Open boek" in stored.article["title"]

    # Explicit topics regenerate the parts they have (or everything when they have none).
    explicit = await regenerate(store, topic_ids=["verlof", "lunchmenu"])
    assert [(r.topic_id, r.kinds) for r in explicit] == [
        ("verlof", ("slides",)), ("lunchmenu", ("article", "slides", "infographic")),
    ]  # fmt: skip
    missing = await regenerate(store, topic_ids=["bestaat-niet"])
    assert missing[0].error and missing[0].kinds == ()


async def test_custom_topics_are_checked_too(store: Store, offline: MemorySink) -> None:
    from services.content.topics import resolve_or_create

    custom = await resolve_or_create(store, ref="Ik wil leren over Kubernetes", requested_by="U1")
    await ensure_content(store, topic=custom, content_type="article")
    assert custom.custom and await find_stale(store) == []
    # Approved into the KG with another description: the KG version now counts.
    await store.topics.upsert_many(
        [Topic(id=custom.id, label=custom.label, type="concept", description="Anders.")]
    )
    assert await on_kb_updated(store, changed_ids=[custom.id]) == [custom.id]


async def test_regeneration_waits_for_a_generation_running_elsewhere(
    store: Store, offline: MemorySink
) -> None:
    import asyncio

    from services.content.locks import release, try_acquire

    await generate(store, "verlof", "slides")
    calls = len(offline.records)
    assert await try_acquire(store, "verlof", "other-replica", ttl=30)  # it is generating
    run = asyncio.create_task(regenerate(store, topic_ids=["verlof"]))
    await asyncio.sleep(0.4)
    assert not run.done() and len(offline.records) == calls  # no second generation meanwhile
    await release(store, "verlof", "other-replica")
    (result,) = await asyncio.wait_for(run, 15)
    assert (result.kinds, result.error) == (("slides",), None)
    assert len(offline.records) == calls + 1
