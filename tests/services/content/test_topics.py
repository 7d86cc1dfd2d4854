"""Resolving topics and creating custom topics (ids, collisions, suggestions)."""

from __future__ import annotations

import pytest

from services.content.topics import (
    create_custom_topic,
    find_topic,
    resolve_or_create,
    topic_fingerprint,
    unique_topic_id,
)
from shared.bus import KbDelta
from shared.errors import BadInputError
from shared.llm import LLMRuntime
from shared.store import Store, Topic
from tests.fakes.anthropic_server import FakeAnthropic, tool_reply

DESCRIPTION = "Containers orkestreren. Zo draai je apps betrouwbaar."


def polished(label: str, **extra: str) -> object:
    return tool_reply("emit_custom_topic", {"label": label, "description": DESCRIPTION, **extra})


async def test_a_custom_topic_gets_a_kebab_id_standard_relevance_and_a_pending_suggestion(
    store: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(polished("Kubernetes basis"))
    topic = await create_custom_topic(
        store, request_text="ik wil leren over k8s", requested_by="U7"
    )
    assert (topic.id, topic.label, topic.relevance, topic.custom) == (
        "kubernetes-basis", "Kubernetes basis", "standard", True,
    )  # fmt: skip
    body = fake_anthropic.requests[0].body
    assert body["tool_choice"] == {"type": "tool", "name": "emit_custom_topic"}
    assert "ik wil leren over k8s" in body["messages"][0]["content"]

    assert await store.topics.get("kubernetes-basis") is None  # the KG has one writer
    suggestion = await store.suggestions.get("custom-topic-kubernetes-basis")
    assert suggestion is not None and suggestion.status == "pending"
    assert suggestion.proposed_by == "U7"
    delta = KbDelta.model_validate(suggestion.delta)  # approvable as an ordinary delta
    assert [t.id for t in delta.topics] == ["kubernetes-basis"]
    assert delta.topics[0].learning_relevance == "standard"


async def test_id_collisions_get_numbered_suffixes(
    store: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    await store.topics.upsert_many(
        [Topic(id="kubernetes", label="Kubernetes cluster", type="concept")]
    )
    fake_anthropic.enqueue(polished("Kubernetes"), polished("Kubernetes!"), polished("Kubernetes?"))
    ids = [
        (await create_custom_topic(store, request_text=text, requested_by="U1")).id
        for text in ("k8s", "kube", "kubes")
    ]
    assert ids == ["kubernetes-2", "kubernetes-3", "kubernetes-4"]
    assert await store.topics.get("kubernetes") is not None
    for topic_id in ids:
        assert await store.suggestions.get(f"custom-topic-{topic_id}") is not None


async def test_explicit_relevance_is_kept(
    store: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(polished("Security basics", learning_relevance="core", type="process"))
    topic = await create_custom_topic(store, request_text="security", requested_by="U1")
    assert (topic.relevance, topic.type) == ("core", "process")


async def test_a_polished_label_that_names_an_existing_topic_reuses_it(
    store: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(polished("Verlof"))
    topic = await create_custom_topic(store, request_text="hoe vraag ik vrij", requested_by="U1")
    assert (topic.id, topic.custom) == ("verlof", False)
    assert await store.suggestions.list() == []


async def test_resolution_by_id_label_and_earlier_request_makes_no_call(
    store: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    for ref in ("verlof", "VERLOF", "  Radicale   transparantie ", "radicale transparantie"):
        found = await find_topic(store, ref)
        assert found is not None and not found.custom
    assert fake_anthropic.requests == []

    fake_anthropic.enqueue(polished("Kubernetes basis"))
    first = await resolve_or_create(store, ref="Leer me Kubernetes", requested_by="U1")
    again = await resolve_or_create(store, ref="leer me kubernetes", requested_by="U2")
    by_id = await find_topic(store, "kubernetes-basis")
    assert first.id == again.id == "kubernetes-basis" and by_id == first
    assert len(fake_anthropic.requests) == 1


@pytest.mark.parametrize("text", ["", "   ", "x" * 201])
async def test_bad_requests_make_no_call(
    store: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime, text: str
) -> None:
    with pytest.raises(BadInputError):
        await create_custom_topic(store, request_text=text, requested_by="U1")
    assert fake_anthropic.requests == []


def test_unique_topic_id() -> None:
    assert unique_topic_id("a", set()) == "a"
    assert unique_topic_id("a", {"a"}) == "a-2"
    assert unique_topic_id("a", {"a", "a-2", "a-3"}) == "a-4"
    long = "x" * 120
    assert unique_topic_id(long, {long}) == "x" * 118 + "-2"


def test_fingerprint_follows_label_and_description() -> None:
    base = topic_fingerprint("Verlof", "Hoe je verlof aanvraagt.")
    assert base == topic_fingerprint("Verlof", "Hoe je verlof aanvraagt.")
    assert base != topic_fingerprint("Verlof!", "Hoe je verlof aanvraagt.")
    assert base != topic_fingerprint("Verlof", "Anders.")
