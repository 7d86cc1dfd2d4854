"""The retry policy: full-jitter bounds, what is retried, retry-after parsing."""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest

from shared.llm import (
    LLMConnectionError,
    LLMHttpError,
    LLMInputError,
    RetryPolicy,
    parse_retry_after,
)


def test_defaults_are_the_documented_production_values() -> None:
    policy = RetryPolicy()
    assert (policy.base, policy.cap, policy.max_retries, policy.max_retry_after) == (
        1.0,
        16.0,
        4,
        60.0,
    )


def test_full_jitter_stays_within_the_capped_exponential_window() -> None:
    policy = RetryPolicy(rng=random.Random(7))
    for n, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (5, 16.0), (9, 16.0)]:
        samples = [policy.backoff(n) for _ in range(2000)]
        assert all(0.0 <= s <= ceiling for s in samples)
        # Full jitter spreads over the whole window, not just near its top.
        assert min(samples) < ceiling * 0.05 and max(samples) > ceiling * 0.95


@pytest.mark.parametrize("status", [408, 425, 429, 500, 502, 503, 504, 529])
def test_retryable_statuses(status: int) -> None:
    assert RetryPolicy().should_retry(LLMHttpError("x", status=status))


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
def test_other_4xx_are_not_retried(status: int) -> None:
    err = LLMHttpError("x", status=status)
    assert not RetryPolicy().should_retry(err) and err.transient is False


def test_connection_errors_are_retried_and_transient() -> None:
    err = LLMConnectionError("down", timed_out=True)
    assert RetryPolicy().should_retry(err) and err.transient


def test_long_retry_after_fails_fast_but_stays_transient() -> None:
    err = LLMHttpError("x", status=429, retry_after=61)
    assert not RetryPolicy().should_retry(err)
    assert err.transient  # a later redelivery may succeed
    assert RetryPolicy().should_retry(LLMHttpError("x", status=429, retry_after=60))


def test_spend_limit_is_permanent_and_not_retried() -> None:
    err = LLMHttpError("x", status=429, spend_limit=True)
    assert not RetryPolicy().should_retry(err) and err.transient is False


def test_cancellation_and_bad_input_are_not_retried() -> None:
    import asyncio

    assert not RetryPolicy().should_retry(asyncio.CancelledError())
    assert not RetryPolicy().should_retry(LLMInputError("bad"))


def test_negative_constants_are_rejected() -> None:
    with pytest.raises(ValueError, match="negative"):
        RetryPolicy(base=-1)


def test_parse_retry_after_forms() -> None:
    assert parse_retry_after({"retry-after": "2"}) == 2.0
    assert parse_retry_after({"retry-after": "1.5"}) == 1.5
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert parse_retry_after({}) is None
    assert parse_retry_after({"retry-after": "soon"}) is None
    now = time.time()
    date = format_datetime(datetime.fromtimestamp(now + 30, UTC), usegmt=True)
    assert parse_retry_after({"retry-after": date}, now=now) == pytest.approx(30, abs=1.0)
    past = format_datetime(datetime.fromtimestamp(now - 30, UTC), usegmt=True)
    assert parse_retry_after({"retry-after": past}, now=now) == 0.0
