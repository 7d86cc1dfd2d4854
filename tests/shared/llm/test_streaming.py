"""call_llm's streaming path through the real anthropic SDK against the fake's SSE stream."""

from __future__ import annotations

import time

import pytest

from shared.config import build_settings
from shared.llm import (
    LLMHttpError,
    LLMInputError,
    LLMRuntime,
    LLMStreamInterruptedError,
    LLMTruncatedError,
    LLMValidationError,
    MemorySink,
    OfflineProvider,
    Tool,
    call_llm,
    configure_llm,
)
from tests.fakes.anthropic_server import (
    FakeAnthropic,
    overloaded,
    rate_limited,
    stream_broken,
    text_reply,
    tool_reply,
)
from tests.fakes.fixtures import configure_llm_for_fake
from tests.shared.llm.support import Answer, RecordingLimiter


class Pieces:
    """A text sink that records what arrived and when."""

    def __init__(self) -> None:
        self.items: list[tuple[float, str]] = []

    async def __call__(self, text: str) -> None:
        self.items.append((time.monotonic(), text))

    @property
    def text(self) -> str:
        return "".join(t for _, t in self.items)


async def test_text_arrives_in_pieces_before_the_call_returns(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    # The SDK builds its event models on first use (~0.3 s here): warm it like a service is.
    fake_anthropic.enqueue(text_reply("warm"))
    await call_llm(task="t", user="warm", on_text=Pieces())
    fake_anthropic.enqueue(text_reply("Verlof via het HR-portaal.", delta_delay=0.3))
    pieces = Pieces()
    result = await call_llm(task="t", user="hoe vraag ik verlof aan?", on_text=pieces)
    done = time.monotonic()
    assert pieces.text == result.text == "Verlof via het HR-portaal."
    assert len(pieces.items) == 4  # one per word, as the fake (and the API) split it
    assert pieces.items[0][0] < done - 0.6  # the first word came 3 × 0.3 s before the end
    assert fake_anthropic.requests[-1].body["stream"] is True


async def test_usage_and_cost_come_from_the_final_message(fake_anthropic: FakeAnthropic) -> None:
    sink = MemorySink()
    runtime = configure_llm_for_fake(fake_anthropic, sink=sink)
    try:
        usage = {"input_tokens": 1000, "output_tokens": 200, "cache_read_input_tokens": 50}
        fake_anthropic.enqueue(text_reply("klaar", usage=usage))
        result = await call_llm(task="t", user="hi", on_text=Pieces())
    finally:
        await runtime.aclose()
    assert result.usage.input_tokens == 1000 and result.usage.output_tokens == 200
    assert result.usage.cache_read_input_tokens == 50
    assert result.cost_usd > 0 and result.request_id and result.request_id.startswith("req_fake")
    (record,) = sink.records
    assert record.ok and record.output_tokens == 200 and record.cost_usd == result.cost_usd


async def test_tool_input_streams_as_json_deltas_and_is_validated(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    tool = Tool("answer", "Give the answer", Answer)
    fake_anthropic.enqueue(
        tool_reply("answer", {"answer": "ja", "confidence": 0.9}, text="Even kijken."),
        tool_reply("answer", {"answer": "ja", "confidence": 7}),
    )
    pieces = Pieces()
    result = await call_llm(task="t", user="?", tools=[tool], tool_choice="auto", on_text=pieces)
    assert pieces.text == "Even kijken."
    assert result.tool_uses[0].parsed == Answer(answer="ja", confidence=0.9)
    with pytest.raises(LLMValidationError, match="input of tool 'answer'"):
        await call_llm(task="t", user="?", tools=[tool], tool_choice="auto", on_text=Pieces())


async def test_max_tokens_on_a_structured_call_still_raises(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    tool = Tool("answer", "Give the answer", Answer)
    fake_anthropic.enqueue(
        tool_reply("answer", {"answer": "ja", "confidence": 0.5}, stop_reason="max_tokens")
    )
    with pytest.raises(LLMTruncatedError):
        await call_llm(task="t", user="?", tools=[tool], tool_choice="auto", on_text=Pieces())


async def test_failures_before_the_first_text_are_retried(fake_anthropic: FakeAnthropic) -> None:
    limiter = RecordingLimiter()
    runtime = configure_llm_for_fake(fake_anthropic, limiter=limiter)
    try:
        fake_anthropic.enqueue(
            rate_limited(retry_after=0),
            stream_broken(text_reply("eerste poging"), after=0),  # error event before any text
            text_reply("gelukt"),
        )
        pieces = Pieces()
        result = await call_llm(task="t", user="hi", on_text=pieces)
    finally:
        await runtime.aclose()
    assert result.text == pieces.text == "gelukt"
    assert [r.status for r in fake_anthropic.requests] == [429, 200, 200]
    assert limiter.kinds().count("acquire") == 3 and limiter.kinds().count("settle") == 3


async def test_a_stream_broken_after_text_is_not_retried(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(stream_broken(text_reply("een twee drie vier"), after=2))
    pieces = Pieces()
    with pytest.raises(LLMStreamInterruptedError) as info:
        await call_llm(task="t", user="hi", on_text=pieces)
    assert pieces.text == "een twee "
    assert info.value.status == 529  # overloaded_error, though the HTTP status was 200
    assert len(fake_anthropic.requests) == 1
    sink = fake_llm.sink
    assert isinstance(sink, MemorySink) and not sink.records[-1].ok


async def test_an_error_status_before_streaming_maps_like_create(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(*[overloaded()] * 5)
    with pytest.raises(LLMHttpError) as info:
        await call_llm(task="t", user="hi", on_text=Pieces())
    assert info.value.status == 529 and len(fake_anthropic.requests) == 5


async def test_streaming_a_schema_call_is_refused_before_any_request(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    with pytest.raises(LLMInputError, match="on_text"):
        await call_llm(task="t", user="hi", schema=Answer, on_text=Pieces())
    assert fake_anthropic.requests == []


async def test_offline_provider_streams_word_by_word() -> None:
    runtime = configure_llm(build_settings(llm="offline"), provider=OfflineProvider())
    try:
        pieces = Pieces()
        result = await call_llm(task="t", user="Hoe vraag ik verlof aan?", on_text=pieces)
    finally:
        await runtime.aclose()
    assert pieces.text == result.text and len(pieces.items) > 3
