"""A streamed chat turn: every round's text goes out, and the answer is what was streamed."""

from __future__ import annotations

from services.r42.knowledge import KbCache
from services.r42.turn import MAX_INPUT_CHARS, chat_turn
from shared.bus import ChatRequest
from shared.llm import LLMRuntime
from shared.store import Store
from tests.fakes.anthropic_server import FakeAnthropic, stream_broken, text_reply, tool_reply


class Shown:
    def __init__(self) -> None:
        self.pieces: list[str] = []

    async def __call__(self, text: str) -> None:
        self.pieces.append(text)

    @property
    def text(self) -> str:
        return "".join(self.pieces)


async def test_a_preface_before_a_lookup_streams_and_stays_in_the_answer(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(
        tool_reply("lookup_topic", {"id": "verlof"}, tool_id="toolu_1", text="Even kijken."),
        text_reply("Verlof vraag je aan in het HR-portaal (zie Verlof)."),
    )
    shown = Shown()
    request = ChatRequest(user_id="U1", text="Hoe vraag ik verlof aan?", conversation="c1")
    reply = await chat_turn(store=store, kb=kb, request=request, on_text=shown)
    expected = "Even kijken.\n\nVerlof vraag je aan in het HR-portaal (zie Verlof)."
    assert shown.text == reply.text == expected
    assert len(shown.pieces) > 4 and [s.id for s in reply.sources] == ["verlof"]
    stored = await store.threads.get(request.thread_key)
    assert stored[-1].text == expected  # remembered as the person read it


async def test_the_truncation_notice_streams_first(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(text_reply("Kort antwoord."))
    shown = Shown()
    request = ChatRequest(user_id="U1", text="verlof " * (MAX_INPUT_CHARS // 7 + 2))
    reply = await chat_turn(store=store, kb=kb, request=request, on_text=shown)
    assert reply.truncated_input and shown.text == reply.text
    assert reply.text.endswith("\n\nKort antwoord.") and "8.000" in shown.pieces[0]


async def test_a_stream_that_breaks_after_text_ends_in_an_apology(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(stream_broken(text_reply("Verlof vraag je aan in"), after=2))
    shown = Shown()
    request = ChatRequest(user_id="U1", text="Hoe vraag ik verlof aan?")
    reply = await chat_turn(store=store, kb=kb, request=request, on_text=shown)
    assert shown.text == "Verlof vraag "
    assert reply.error_ref and reply.error_ref in reply.text  # not a continuation: replaced
    assert len(fake_anthropic.requests) == 1  # never retried once text was shown
