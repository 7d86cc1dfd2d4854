"""One retry budget per piece of work, and a shared pause past the caller's deadline."""

from __future__ import annotations

import re
import time

import pytest

from shared.llm import (
    AttemptBudget,
    LLMBudgetExhaustedError,
    LLMBusyError,
    LLMHttpError,
    LLMRuntime,
    LocalLimiter,
    MemoryLedger,
    answer_within,
    attempt_budget,
    call_llm,
)
from tests.fakes.anthropic_server import FakeAnthropic, rate_limited, server_error, text_reply


async def test_deliveries_of_one_piece_of_work_share_five_attempts(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.default = lambda body: server_error(500)
    ledger = MemoryLedger()
    # First delivery: its share (3 attempts), then the transient error goes back to the bus.
    with (
        attempt_budget(AttemptBudget(key="chunk:1", ledger=ledger)),
        pytest.raises(LLMHttpError) as first,
    ):
        await call_llm(task="t", user="hi")
    assert first.value.transient and len(fake_anthropic.requests) == 3
    # The redelivery continues the count: 2 more, then the work fails for good.
    with (
        attempt_budget(AttemptBudget(key="chunk:1", ledger=ledger)),
        pytest.raises(
            LLMBudgetExhaustedError, match=r"all 5 API attempts.*last failed with LLMHttpError"
        ) as second,
    ):
        await call_llm(task="t", user="hi")
    assert not second.value.transient
    assert len(fake_anthropic.requests) == 5
    # Any later delivery is refused before it sends anything.
    with (
        attempt_budget(AttemptBudget(key="chunk:1", ledger=ledger)),
        pytest.raises(LLMBudgetExhaustedError),
    ):
        await call_llm(task="t", user="hi")
    assert len(fake_anthropic.requests) == 5
    assert await ledger.used("chunk:1") == 5


async def test_success_forgets_the_count_and_other_work_has_its_own(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(server_error(503), text_reply("ok"), text_reply("other"))
    ledger = MemoryLedger()
    budget = AttemptBudget(key="chunk:a", ledger=ledger)
    with attempt_budget(budget):
        assert (await call_llm(task="t", user="hi")).text == "ok"
    assert await ledger.used("chunk:a") == 2
    await budget.succeeded()
    assert await ledger.used("chunk:a") == 0
    with attempt_budget(AttemptBudget(key="chunk:b", ledger=ledger, limit=1, per_delivery=1)):
        assert (await call_llm(task="t", user="hi")).text == "other"


def test_a_budget_needs_at_least_one_attempt() -> None:
    with pytest.raises(ValueError, match="limit >= 1"):
        AttemptBudget(key="k", ledger=MemoryLedger(), limit=0)


async def test_a_pause_past_the_deadline_answers_at_once(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "Europe/Amsterdam")
    time.tzset()
    fake_anthropic.enqueue(rate_limited(retry_after=120), text_reply("never"))
    limiter = LocalLimiter()
    started = time.monotonic()
    with answer_within(90), pytest.raises(LLMBusyError) as first:
        await call_llm(task="t", user="hi", limiter=limiter)
    assert len(fake_anthropic.requests) == 1
    assert 118 <= first.value.until - time.time() <= 121
    # The next turn does not wait out its 90 s behind the shared pause: no request at all.
    with answer_within(90), pytest.raises(LLMBusyError) as second:
        await call_llm(task="t", user="hi", limiter=limiter)
    assert time.monotonic() - started < 5
    assert len(fake_anthropic.requests) == 1
    assert abs(second.value.until - first.value.until) < 1
    assert re.fullmatch(r"\d\d:\d\d", second.value.local_time())
    expected = time.strftime("%H:%M", time.localtime(second.value.until + 59))
    assert second.value.local_time() == expected


async def test_a_pause_within_the_deadline_is_waited_out(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(rate_limited(retry_after=1), text_reply("done"))
    with answer_within(90):
        result = await call_llm(task="t", user="hi", limiter=LocalLimiter())
    assert result.text == "done" and len(fake_anthropic.requests) == 2
