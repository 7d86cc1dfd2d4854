"""Our retry policy (the SDK's is off): full-jitter exponential backoff that honours retry-after."""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC
from email.utils import parsedate_to_datetime

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from shared.llm.budget import current_budget
from shared.llm.errors import LLMBusyError, LLMHttpError

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff constants; defaults are production values, tests inject a small `base`."""

    base: float = 1.0
    cap: float = 16.0
    max_retries: int = 4
    max_retry_after: float = 60.0
    sleep: Sleep = field(default=asyncio.sleep, compare=False)
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.base < 0 or self.cap < 0 or self.max_retries < 0 or self.max_retry_after < 0:
            raise ValueError(f"retry constants must not be negative: {self!r}")

    def backoff(self, retry_number: int) -> float:
        """Full jitter: uniform over [0, min(cap, base·2^(n-1))] for the n-th retry (n ≥ 1)."""
        ceiling = min(self.cap, self.base * (2 ** max(retry_number - 1, 0)))
        return self.rng.uniform(0.0, ceiling)

    def should_retry(self, exc: BaseException) -> bool:
        """Retry transient HTTP/connection failures, unless retry-after says wait too long."""
        if not isinstance(exc, LLMHttpError) or not exc.transient:
            return False  # cancellation, bad input, validation, other 4xx, spend limit
        if isinstance(exc, LLMBusyError):
            return False  # the caller cannot wait that long: it answers at once
        budget = current_budget()
        if budget is not None and budget.delivery_done:
            return False  # this delivery spent its share of the work's budget
        return exc.retry_after is None or exc.retry_after <= self.max_retry_after

    def wait(self, retry_state: RetryCallState) -> float:
        """The pause before the next attempt: the jittered backoff, at least any retry-after."""
        delay = self.backoff(retry_state.attempt_number)
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        if isinstance(exc, LLMHttpError) and exc.retry_after is not None:
            delay = max(delay, exc.retry_after)
        return delay

    def retrying(self) -> AsyncRetrying:
        """A fresh tenacity controller for one call."""
        return AsyncRetrying(
            stop=stop_after_attempt(self.max_retries + 1),
            wait=self.wait,
            retry=retry_if_exception(self.should_retry),
            sleep=self.sleep,
            before_sleep=_log_retry,
            reraise=True,
        )


def _log_retry(retry_state: RetryCallState) -> None:
    exc = retry_state.outcome.exception() if retry_state.outcome else None
    delay = retry_state.upcoming_sleep
    # INFO, like the SDK's own retry log: a 429 storm must not flood WARNING; the final
    # outcome of every call is in telemetry.
    log.info(
        "llm attempt %d failed (%s); retrying in %.2fs",
        retry_state.attempt_number,
        exc.__class__.__name__ + (f" {exc}" if exc else ""),
        delay,
    )


def parse_retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `retry-after` as seconds or an HTTP date."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(float(raw_ms) / 1000.0, 0.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    raw = raw.strip()
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    if when.tzinfo is None:  # RFC 9110 dates are GMT; a zone-less one is read as UTC
        when = when.replace(tzinfo=UTC)
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)
