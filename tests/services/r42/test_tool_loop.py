"""The tool loop against the fake Anthropic server: lookups, the 3-hop cap, unknown ids."""

from __future__ import annotations

from services.r42.knowledge import KbCache
from services.r42.prompts import not_in_kb
from services.r42.turn import chat_turn
from shared.bus import ChatRequest
from shared.llm import LLMRuntime
from shared.store import Store
from tests.fakes.anthropic_server import FakeAnthropic, text_reply, tool_reply
from tests.services.r42.conftest import tool_results


def ask(text: str, user: str = "U1", **kw: object) -> ChatRequest:
    return ChatRequest(user_id=user, user_name="Ann", text=text, **kw)  # type: ignore[arg-type]


async def test_lookup_then_answer(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(
        tool_reply("lookup_topic", {"id": "verlof"}, tool_id="toolu_1", text="Even kijken."),
        text_reply("Verlof vraag je aan in het HR-portaal, twee weken vooraf (zie Verlof)."),
    )
    reply = await chat_turn(store=store, kb=kb, request=ask("Hoe vraag ik verlof aan?"))
    assert reply.text.startswith("Verlof vraag je aan in het HR-portaal")
    assert reply.error_ref is None and not reply.offline and reply.proposal is None
    assert [s.id for s in reply.sources] == ["verlof"]

    first, second = fake_anthropic.requests
    assert first.body["model"] == fake_llm.settings.model_fast  # the fast tier
    assert first.body["tool_choice"] == {"type": "auto"}
    names = [t["name"] for t in first.body["tools"]]
    assert names == ["search_kb", "lookup_topic", "propose_graph_delta"]
    assert first.body["tools"] == second.body["tools"]  # the cached prefix never changes
    # This KB is far below the fast model's minimum cacheable prefix: no marks are sent.
    assert [b.get("cache_control") for b in first.body["system"]] == [None] * 4
    assert "[verlof] Verlof" in first.body["system"][2]["text"]
    assert first.body["messages"] == [{"role": "user", "content": "Hoe vraag ik verlof aan?"}]

    # The second request replays the assistant's tool call and answers it.
    assistant = second.body["messages"][-2]
    assert assistant["role"] == "assistant"
    assert [b["type"] for b in assistant["content"]] == ["text", "tool_use"]
    (result,) = tool_results(second)
    assert result["tool_use_id"] == "toolu_1" and not result.get("is_error")
    assert "twee weken vooraf" in result["content"]  # the full description
    assert "ouderschapsverlof" in result["content"]  # the generated content
    assert "example.com" not in result["content"]  # layout keys are left out
    assert "sprint-review" not in result["content"]  # only this topic's relations


async def test_three_lookups_then_tools_are_forbidden(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(
        tool_reply("lookup_topic", {"id": "verlof"}, tool_id="t1"),
        tool_reply("lookup_topic", {"id": "declaraties"}, tool_id="t2"),
        tool_reply("lookup_topic", {"id": "sprint-review"}, tool_id="t3"),
        text_reply("Drie onderwerpen bekeken: Verlof, Declaraties en Sprint review."),
    )
    reply = await chat_turn(store=store, kb=kb, request=ask("Vertel over verlof en declaraties"))
    requests = fake_anthropic.requests
    assert len(requests) == 4
    assert [r.body["tool_choice"] for r in requests] == [{"type": "auto"}] * 3 + [{"type": "none"}]
    assert [b["tool_use_id"] for b in tool_results(requests[3])] == ["t3"]
    assert reply.text.startswith("Drie onderwerpen bekeken")
    assert [s.id for s in reply.sources] == ["verlof", "declaraties", "sprint-review"]


async def test_a_model_ignoring_the_cap_cannot_loop(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    # A misbehaving model keeps calling the tool even with tool_choice none.
    fake_anthropic.default = lambda body: tool_reply("lookup_topic", {"id": "verlof"})
    reply = await chat_turn(store=store, kb=kb, request=ask("verlof?"))
    assert len(fake_anthropic.requests) == 4
    assert reply.error_ref is None and reply.text  # a (fallback) answer, not a hang


async def test_two_lookups_in_one_reply_past_the_cap(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    double = tool_reply("lookup_topic", {"id": "verlof"}, tool_id="a")
    double = type(double)(
        content=[*double.content,
                 {"type": "tool_use", "id": "b", "name": "lookup_topic",
                  "input": {"id": "declaraties"}}],
        stop_reason="tool_use",
    )  # fmt: skip
    fake_anthropic.enqueue(
        tool_reply("lookup_topic", {"id": "sprint-review"}, tool_id="x"),
        tool_reply("lookup_topic", {"id": "product-owner"}, tool_id="y"),
        double,
        text_reply("Klaar."),
    )
    await chat_turn(store=store, kb=kb, request=ask("alles over verlof"))
    results = tool_results(fake_anthropic.requests[3])
    assert [r["tool_use_id"] for r in results] == ["a", "b"]  # every tool_use is answered
    assert not results[0].get("is_error")
    assert results[1]["is_error"] is True and "Limiet" in results[1]["content"]
    assert fake_anthropic.requests[3].body["tool_choice"] == {"type": "none"}


async def test_unknown_topic_id_is_an_error_result_and_the_model_continues(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(
        tool_reply("lookup_topic", {"id": "bestaat-niet"}, tool_id="t1"),
        text_reply("Dat staat niet in de kennisgraaf."),
    )
    reply = await chat_turn(store=store, kb=kb, request=ask("Wat is bestaat-niet?"))
    (result,) = tool_results(fake_anthropic.requests[1])
    assert result["is_error"] is True
    assert "bestaat-niet" in result["content"] and "niet in de kennisgraaf" in result["content"]
    # Nothing above the relevance floor and nothing looked up: R42's own line, a KB miss.
    assert reply.text == not_in_kb("nl") and reply.kb_miss
    assert reply.sources == [] and reply.error_ref is None


async def test_a_label_instead_of_an_id_still_resolves(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(
        tool_reply("lookup_topic", {"id": "[Product owner]"}, tool_id="t1"), text_reply("Ok.")
    )
    reply = await chat_turn(store=store, kb=kb, request=ask("Wie beheert de backlog?"))
    (result,) = tool_results(fake_anthropic.requests[1])
    assert not result.get("is_error") and "[product-owner]" in result["content"]
    assert [s.id for s in reply.sources] == ["product-owner"]


async def test_sources_are_context_topics_the_answer_mentions(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(
        text_reply("De Product Owner leidt de sprint review; zie ook radicale transparantie.")
    )
    reply = await chat_turn(
        store=store, kb=kb, request=ask("Leidt de product owner de sprint review?")
    )
    ids = [s.id for s in reply.sources]
    assert set(ids) == {"sprint-review", "product-owner"}  # not in context: not a source
    assert {s.label for s in reply.sources} == {"Sprint review", "Product owner"}
    assert len(fake_anthropic.requests) == 1
