"""One telemetry record per call (with cost), failing sinks, and the limiter hooks."""

from __future__ import annotations

import logging
import time

import pytest

from shared.llm import (
    LLMCallRecord,
    LLMHttpError,
    LLMRuntime,
    LLMTruncatedError,
    Tool,
    call_llm,
    model_class,
)
from tests.fakes.anthropic_server import (
    FakeAnthropic,
    error_reply,
    rate_limited,
    text_reply,
    tool_reply,
)
from tests.fakes.fixtures import configure_llm_for_fake
from tests.shared.llm.support import Answer, RecordingLimiter

USAGE = {
    "input_tokens": 1_000,
    "output_tokens": 500,
    "cache_creation_input_tokens": 2_000,
    "cache_read_input_tokens": 10_000,
}
# Haiku 4.5 at $1/$5: 1000·1 + 2000·1.25 + 10000·0.1 + 500·5 = 7000 µ$
HAIKU_COST = 0.007


async def test_success_record_carries_usage_and_cost(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(text_reply("hi", usage=USAGE))
    result = await call_llm(task="greet", tier="fast", user="hello")
    (record,) = fake_llm.sink.records  # type: ignore[union-attr]
    assert isinstance(record, LLMCallRecord)
    assert (record.task, record.tier, record.model) == ("greet", "fast", "claude-haiku-4-5")
    assert (record.ok, record.error_msg, record.provider) == (True, None, "anthropic")
    assert (record.input_tokens, record.output_tokens) == (1_000, 500)
    assert (record.cache_creation_input_tokens, record.cache_read_input_tokens) == (2_000, 10_000)
    assert record.cost_usd == pytest.approx(HAIKU_COST)
    assert result.cost_usd == pytest.approx(HAIKU_COST)
    assert record.request_id == result.request_id and record.stop_reason == "end_turn"
    assert record.duration_ms > 0


async def test_http_failure_record_after_retries_is_one_record(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(
        rate_limited(retry_after=0.01), error_reply(403, "permission_error", "no")
    )
    with pytest.raises(LLMHttpError):
        await call_llm(task="chat", user="hello")
    (record,) = fake_llm.sink.records  # type: ignore[union-attr]
    assert not record.ok and "403" in record.error_msg and "LLMHttpError" in record.error_msg
    assert record.cost_usd == 0.0 and record.input_tokens == 0
    assert record.model == fake_llm.settings.model_standard


async def test_truncated_failure_record_still_counts_the_tokens_paid_for(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(tool_reply("answer", {}, stop_reason="max_tokens", usage=USAGE))
    with pytest.raises(LLMTruncatedError):
        await call_llm(
            task="t",
            tier="fast",
            user="q",
            tools=[Tool("answer", "Answer", Answer)],
            tool_choice="answer",
        )
    (record,) = fake_llm.sink.records  # type: ignore[union-attr]
    assert not record.ok and record.error_msg.startswith("LLMTruncatedError")
    assert record.stop_reason == "max_tokens" and record.cost_usd == pytest.approx(HAIKU_COST)


class ExplodingSink:
    def emit(self, record: LLMCallRecord) -> None:
        raise RuntimeError("sink down")


async def test_a_raising_sink_does_not_affect_the_call(
    fake_anthropic: FakeAnthropic, caplog: pytest.LogCaptureFixture
) -> None:
    runtime = configure_llm_for_fake(fake_anthropic, sink=ExplodingSink())
    fake_anthropic.enqueue(text_reply("still fine"))
    with caplog.at_level(logging.WARNING):
        result = await call_llm(task="t", user="hi")
    assert result.text == "still fine"
    assert "telemetry sink ExplodingSink failed" in caplog.text
    await runtime.aclose()


async def test_limiter_hooks_around_each_attempt(fake_anthropic: FakeAnthropic) -> None:
    limiter = RecordingLimiter()
    runtime = configure_llm_for_fake(fake_anthropic)
    fake_anthropic.enqueue(
        rate_limited(retry_after=0.05),
        text_reply("ok", usage={"input_tokens": 40, "output_tokens": 7}),
    )
    before = time.time()
    await call_llm(task="t", user="x" * 400, max_tokens=300, limiter=limiter)
    assert limiter.kinds() == ["acquire", "settle", "pause", "acquire", "settle"]
    acquire, failed_settle, pause, _, settle = (data for _, data in limiter.calls)
    model = runtime.settings.model_standard
    assert acquire["model"] == model and acquire["output"] == 300
    assert 100 <= acquire["input"] <= 130  # ~chars/4 of the 400-char message plus its JSON
    assert failed_settle["permit"].model_class == model_class(model)
    assert (failed_settle["input"], failed_settle["output"]) == (acquire["input"], 0)
    assert pause["model"] == model and before + 0.05 <= pause["until"] <= time.time() + 0.05
    assert (settle["input"], settle["output"]) == (40, 7)
    await runtime.aclose()


async def test_runtime_default_limiter_is_used(fake_anthropic: FakeAnthropic) -> None:
    limiter = RecordingLimiter()
    runtime = configure_llm_for_fake(fake_anthropic, limiter=limiter)
    await call_llm(task="t", user="hi")
    assert limiter.kinds() == ["acquire", "settle"]
    await runtime.aclose()


async def test_cache_writes_count_toward_the_settled_input(fake_anthropic: FakeAnthropic) -> None:
    limiter = RecordingLimiter()
    runtime = configure_llm_for_fake(fake_anthropic, limiter=limiter)
    fake_anthropic.enqueue(text_reply("ok", usage=USAGE))
    await call_llm(task="t", user="hi")
    assert limiter.calls[-1][1]["input"] == 1_000 + 2_000  # cache reads are excluded
    await runtime.aclose()


async def test_a_failing_limiter_never_loses_the_call(
    fake_anthropic: FakeAnthropic, caplog: pytest.LogCaptureFixture
) -> None:
    limiter = RecordingLimiter(fail=True)
    runtime = configure_llm_for_fake(fake_anthropic, limiter=limiter)
    fake_anthropic.enqueue(rate_limited(retry_after=0.01), text_reply("made it"))
    with caplog.at_level(logging.WARNING):
        assert (await call_llm(task="t", user="hi")).text == "made it"
    assert "limiter acquire failed" in caplog.text and "limiter pause failed" in caplog.text
    assert limiter.kinds().count("acquire") == 2
    await runtime.aclose()


async def test_call_llm_honours_a_real_local_limiter_pause(fake_anthropic: FakeAnthropic) -> None:
    from shared.llm import LocalLimiter

    limiter = LocalLimiter()
    runtime = configure_llm_for_fake(fake_anthropic, limiter=limiter)
    fake_anthropic.enqueue(rate_limited(retry_after=0.3), text_reply("after the pause"))
    assert (await call_llm(task="t", tier="fast", user="hi")).text == "after the pause"
    first, second = fake_anthropic.requests
    assert second.monotonic - first.monotonic >= 0.3
    # The limiter learnt the pause (so other callers of this model class wait too).
    assert limiter.paused_until(runtime.settings.model_fast) >= first.wall + 0.3 - 0.05
    await limiter.aclose()
    await runtime.aclose()
