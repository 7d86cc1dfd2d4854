"""Retry behaviour through the real anthropic SDK against the fake server."""

from __future__ import annotations

import asyncio

import pytest

from shared.llm import (
    LLMConnectionError,
    LLMHttpError,
    LLMRuntime,
    LLMTruncatedError,
    Tool,
    call_llm,
)
from tests.fakes.anthropic_server import (
    FakeAnthropic,
    error_reply,
    overloaded,
    rate_limited,
    server_error,
    slow,
    text_reply,
    tool_reply,
)
from tests.shared.llm.support import Answer


async def test_retry_after_two_seconds_is_honoured(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(rate_limited(retry_after=2), text_reply("done"))
    result = await call_llm(task="t", user="hi")
    first, second = fake_anthropic.requests
    assert result.text == "done"
    assert (first.status, second.status) == (429, 200)
    assert second.monotonic - first.monotonic >= 2.0


async def test_retry_after_as_http_date_is_honoured(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(rate_limited(retry_after=1, http_date=True), text_reply("done"))
    assert (await call_llm(task="t", user="hi")).text == "done"
    assert [r.status for r in fake_anthropic.requests] == [429, 200]


async def test_retry_after_over_sixty_seconds_fails_at_once(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(rate_limited(retry_after=120))
    with pytest.raises(LLMHttpError) as info:
        await call_llm(task="t", user="hi")
    assert info.value.status == 429 and info.value.retry_after == 120
    assert info.value.transient  # services nack it with a delay
    assert len(fake_anthropic.requests) == 1


async def test_spend_limit_429_is_not_retried(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(rate_limited(retry_after=1, spend_limit=True), text_reply("never"))
    with pytest.raises(LLMHttpError) as info:
        await call_llm(task="t", user="hi")
    assert info.value.spend_limit and not info.value.transient
    assert len(fake_anthropic.requests) == 1


async def test_400_is_sent_exactly_once(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(error_reply(400, "invalid_request_error", "messages: bad"))
    with pytest.raises(LLMHttpError) as info:
        await call_llm(task="t", user="hi")
    err = info.value
    assert (err.status, err.error_type, err.transient) == (400, "invalid_request_error", False)
    assert err.request_id and err.request_id.startswith("req_fake_")
    assert err.body["error"]["message"] == "messages: bad"
    assert len(fake_anthropic.requests) == 1


async def test_529_then_success_is_retried(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(overloaded(), text_reply("recovered"))
    assert (await call_llm(task="t", user="hi")).text == "recovered"
    assert [r.status for r in fake_anthropic.requests] == [529, 200]


async def test_at_most_four_retries(fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime) -> None:
    fake_anthropic.enqueue(*[server_error(503)] * 6)
    with pytest.raises(LLMHttpError) as info:
        await call_llm(task="t", user="hi")
    assert info.value.status == 503 and info.value.transient
    assert len(fake_anthropic.requests) == 5


async def test_forced_tool_stopped_at_max_tokens_is_truncated_and_not_retried(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(tool_reply("answer", {"answer": "par"}, stop_reason="max_tokens"))
    with pytest.raises(LLMTruncatedError, match="max_tokens=50"):
        await call_llm(
            task="t",
            user="hi",
            tools=[Tool("answer", "Answer", Answer)],
            tool_choice="answer",
            max_tokens=50,
        )
    assert len(fake_anthropic.requests) == 1


async def test_schema_call_stopped_at_max_tokens_is_truncated(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    # The partial text even holds a parsable object: it must still not be used.
    fake_anthropic.enqueue(
        text_reply('{"answer": "a", "confidence": 1} and {"more', stop_reason="max_tokens")
    )
    with pytest.raises(LLMTruncatedError):
        await call_llm(task="t", user="hi", schema=Answer)


async def test_timeouts_are_retried_then_fail_clearly(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(*[slow(text_reply("late"), 3.0)] * 5)
    with pytest.raises(LLMConnectionError, match=r"timed out after 0\.2s") as info:
        await call_llm(task="t", user="hi", timeout=0.2)
    assert info.value.timed_out and info.value.transient
    assert len(fake_anthropic.requests) == 5


async def test_connection_refused_is_a_transient_connection_error(
    fake_anthropic: FakeAnthropic,
) -> None:
    from tests.fakes.fixtures import configure_llm_for_fake

    url = fake_anthropic.url
    fake_anthropic.stop()
    runtime = configure_llm_for_fake(fake_anthropic)
    assert runtime.settings.anthropic_base_url == url
    with pytest.raises(LLMConnectionError, match="could not reach") as info:
        await call_llm(task="t", user="hi")
    assert info.value.transient and not info.value.timed_out
    await runtime.aclose()


async def test_cancellation_stops_the_call_without_retry(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(slow(text_reply("late"), 5.0), text_reply("should never be asked"))
    task = asyncio.create_task(call_llm(task="t", user="hi"))
    for _ in range(200):
        if fake_anthropic.requests:
            break
        await asyncio.sleep(0.01)
    assert len(fake_anthropic.requests) == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(0.3)  # a retry would have arrived by now (backoff base is 0.01 s)
    assert len(fake_anthropic.requests) == 1
    record = fake_llm.sink.records[-1]  # type: ignore[union-attr]
    assert not record.ok and record.error_msg.startswith("CancelledError")
