"""The relevance floor, search_kb and the 3-hop cap, against the fake Anthropic server."""

from __future__ import annotations

from typing import Any

from services.r42.knowledge import KbCache
from services.r42.prompts import ENGLISH_QUESTION, NOT_RELEVANT, not_in_kb
from services.r42.turn import chat_turn
from shared.bus import ChatRequest
from shared.llm import LLMRuntime
from shared.store import Store, Topic
from tests.fakes.anthropic_server import FakeAnthropic, Reply, text_reply, tool_reply
from tests.services.r42.conftest import tool_results


def ask(text: str, user: str = "U1") -> ChatRequest:
    return ChatRequest(user_id=user, user_name="Ann", text=text)


class Shown:
    def __init__(self) -> None:
        self.pieces: list[str] = []

    async def __call__(self, text: str) -> None:
        self.pieces.append(text)

    @property
    def text(self) -> str:
        return "".join(self.pieces)


async def test_below_the_floor_the_model_is_overruled_and_the_question_is_a_kb_miss(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    # The model answers from general knowledge: nothing of it reaches the person.
    fake_anthropic.enqueue(text_reply("Een vrije dag regel je bij je manager, meestal."))
    shown = Shown()
    reply = await chat_turn(store=store, kb=kb, request=ask("Hoe regel ik een vrije dag?"),
                            on_text=shown)  # fmt: skip
    assert reply.text == shown.text == not_in_kb("nl")
    assert reply.kb_miss and reply.sources == [] and reply.language == "nl"
    (request,) = fake_anthropic.requests
    assert request.body["max_tokens"] == 2048  # R42's answer budget by default
    # The model was told that nothing matched (in the per-turn tail, after the cached blocks).
    assert NOT_RELEVANT in request.body["system"][3]["text"]
    assert "(geen passende onderwerpen gevonden)" in request.body["system"][2]["text"]
    thread = await store.threads.get("U1")
    assert thread[-1].text == not_in_kb("nl")  # remembered as shown


async def test_an_english_question_finds_dutch_topics_through_search_kb(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(
        tool_reply("search_kb", {"query": "verlof vrije dag"}, tool_id="s1"),
        text_reply("You request leave in the HR portal, two weeks ahead (see Verlof)."),
    )
    shown = Shown()
    reply = await chat_turn(store=store, kb=kb, request=ask("How do I book a day off?"),
                            on_text=shown)  # fmt: skip
    assert (
        reply.text
        == shown.text
        == ("You request leave in the HR portal, two weeks ahead (see Verlof).")
    )
    assert [s.id for s in reply.sources] == ["verlof"]
    assert reply.language == "en" and not reply.kb_miss
    first, second = fake_anthropic.requests
    tail = first.body["system"][3]["text"]
    assert ENGLISH_QUESTION in tail and NOT_RELEVANT in tail
    (result,) = tool_results(second)
    assert result["tool_use_id"] == "s1" and not result.get("is_error")
    assert "[verlof] Verlof (process)" in result["content"]


async def test_search_kb_that_finds_nothing_keeps_the_turn_a_kb_miss(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(
        tool_reply("search_kb", {"query": "hoofdstad Frankrijk"}, tool_id="s1"),
        text_reply("Parijs."),
    )
    reply = await chat_turn(store=store, kb=kb, request=ask("Wat is de hoofdstad van Frankrijk?"))
    assert reply.text == not_in_kb("nl") and reply.kb_miss
    (result,) = tool_results(fake_anthropic.requests[1])
    assert "Niets gevonden" in result["content"] and not result.get("is_error")


async def test_bad_search_input_is_an_error_result_not_a_failed_turn(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(
        Reply(content=[
            {"type": "tool_use", "id": "a", "name": "search_kb", "input": {"query": 42}},
            {"type": "tool_use", "id": "b", "name": "search_kb", "input": {"query": "x" * 201}},
            {"type": "tool_use", "id": "c", "name": "search_kb", "input": {}},
        ], stop_reason="tool_use"),
        text_reply("Verlof vraag je aan in het HR-portaal (Verlof)."),
    )  # fmt: skip
    reply = await chat_turn(store=store, kb=kb, request=ask("Hoe vraag ik verlof aan?"))
    assert reply.error_ref is None and reply.text.startswith("Verlof vraag je aan")
    results = tool_results(fake_anthropic.requests[1])
    assert [r["is_error"] for r in results] == [True, True, True]
    assert "tekst" in results[0]["content"] and "te lang" in results[1]["content"]


async def test_search_results_are_bounded(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    many = [
        Topic(id=f"verlof-{i}", label=f"Verlof variant {i}", type="process",
              description="Verlof " + "en nog meer uitleg over verlof " * 40)
        for i in range(12)
    ]  # fmt: skip
    await store.topics.upsert_many(many)
    kb.invalidate()
    fake_anthropic.enqueue(tool_reply("search_kb", {"query": "verlof"}), text_reply("Zie Verlof."))
    await chat_turn(store=store, kb=kb, request=ask("Hoe vraag ik verlof aan?"))
    (result,) = tool_results(fake_anthropic.requests[1])
    lines = result["content"].splitlines()
    assert len(lines) == 1 + 5  # a heading and at most five topics
    assert all(len(line) <= 400 for line in lines)


async def test_at_most_three_tool_hops_per_turn(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    """A model that keeps calling tools gets three rounds, then must answer in text."""
    calls = iter(range(100))

    def keep_calling(body: dict[str, Any]) -> Reply:
        if body.get("tool_choice") == {"type": "none"}:
            return text_reply("Verlof vraag je aan in het HR-portaal (Verlof).")
        n = next(calls)
        return Reply(content=[
            {"type": "tool_use", "id": f"s{n}", "name": "search_kb", "input": {"query": "verlof"}},
            {"type": "tool_use", "id": f"l{n}", "name": "lookup_topic", "input": {"id": "verlof"}},
        ], stop_reason="tool_use")  # fmt: skip

    fake_anthropic.default = keep_calling
    reply = await chat_turn(store=store, kb=kb, request=ask("Hoe vraag ik verlof aan?"))
    requests = fake_anthropic.requests
    assert len(requests) == 4  # three tool rounds and the answer
    assert [r.body["tool_choice"]["type"] for r in requests] == ["auto"] * 3 + ["none"]
    errors = [
        bool(result.get("is_error")) for request in requests[1:] for result in tool_results(request)
    ]
    # Three searches or lookups in all; every later call is answered with the limit.
    assert errors == [False, False, False, True, True, True]
    assert reply.text.startswith("Verlof vraag je aan") and not reply.kb_miss


async def test_offline_an_english_question_gets_an_english_answer(
    store: Store, kb: KbCache, offline_r42: LLMRuntime
) -> None:
    reply = await chat_turn(store=store, kb=kb, request=ask("How do I request leave?"))
    assert reply.offline and reply.language == "en" and not reply.kb_miss
    assert reply.text.startswith("[offline] From the knowledge graph (in Dutch): Verlof: ")
    assert [s.id for s in reply.sources] == ["verlof"]


async def test_a_follow_up_is_read_with_the_previous_question_an_off_topic_one_is_not(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(
        text_reply("In het HR-portaal, twee weken vooraf (Verlof)."),
        text_reply("Ja, je teamlead keurt het goed (Verlof)."),
        text_reply("Parijs."),
    )
    await chat_turn(store=store, kb=kb, request=ask("Hoe vraag ik verlof aan?"))
    follow_up = await chat_turn(
        store=store, kb=kb, request=ask("En moet mijn teamlead dat goedkeuren?")
    )
    assert follow_up.text == "Ja, je teamlead keurt het goed (Verlof)." and not follow_up.kb_miss
    assert [s.id for s in follow_up.sources] == ["verlof"]
    assert "[verlof] Verlof" in fake_anthropic.requests[1].body["system"][2]["text"]
    off_topic = await chat_turn(
        store=store, kb=kb, request=ask("Wat is de hoofdstad van Frankrijk?")
    )
    assert off_topic.text == not_in_kb("nl") and off_topic.kb_miss


async def test_a_proposal_below_the_floor_is_answered_and_streamed_after_the_tool_call(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    delta = {"reason": "Ontbreekt", "topics": [
        {"id": "agile-coach", "label": "Agile coach", "type": "role",
         "description": "Begeleidt teams bij het werken in sprints."}]}  # fmt: skip
    fake_anthropic.enqueue(
        tool_reply("propose_graph_delta", delta, text="Even noteren."),
        text_reply("Dank je, ik heb een voorstel klaargezet."),
    )
    shown = Shown()
    text = "Er is een rol Agile coach die teams begeleidt."
    reply = await chat_turn(store=store, kb=kb, request=ask(text), on_text=shown)
    assert reply.proposal is not None and not reply.kb_miss
    # The first round was not shown (it might have become the "not in the KB" line).
    assert reply.text == shown.text == "Dank je, ik heb een voorstel klaargezet."


async def test_a_lookup_with_a_non_string_id_is_an_error_result(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(
        tool_reply("lookup_topic", {"id": ["verlof"]}, tool_id="l1"),
        text_reply("Verlof vraag je aan in het HR-portaal (Verlof)."),
    )
    reply = await chat_turn(store=store, kb=kb, request=ask("Hoe vraag ik verlof aan?"))
    assert reply.error_ref is None and reply.text.startswith("Verlof vraag je aan")
    (result,) = tool_results(fake_anthropic.requests[1])
    assert result["is_error"] is True and "onderwerp-id" in result["content"]
