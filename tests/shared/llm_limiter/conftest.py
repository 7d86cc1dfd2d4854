"""Fixtures for the limiter tests: per-test buckets and NatsKvLimiter factories."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from shared.llm.limiter import LimiterConfig, NatsKvLimiter
from tests.shared.llm_limiter.helpers import LimiterFactory


@pytest.fixture
def bucket(unique: str) -> str:
    """A KV bucket name no other test uses."""
    return f"lim_{unique}"


@pytest.fixture
async def nats_limiter(nats_url: str, bucket: str) -> AsyncIterator[LimiterFactory]:
    """Connect NatsKvLimiters to this test's bucket (closed at teardown)."""
    made: list[NatsKvLimiter] = []

    async def make(config: LimiterConfig | None = None) -> NatsKvLimiter:
        limiter = await NatsKvLimiter.connect(nats_url, bucket=bucket, config=config)
        made.append(limiter)
        assert limiter.mode == "nats"
        return limiter

    yield make
    for limiter in made:
        await limiter.aclose()
