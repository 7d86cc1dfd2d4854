"""Shared helpers for the limiter tests: tight configs and acquire-with-patience."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from shared.llm.limiter import Budget, ClassLimits, LimiterConfig, NatsKvLimiter
from shared.llm.limiting import Limiter, Permit

MODEL = "claude-sonnet-4-5"
# "Never refills" within a test: one unit per ~115 years.
NEVER = 1e-6
BIG = 1e12
# Generous bound for decisions that take milliseconds. Used only where the opposite
# outcome never completes at all (budgets that never refill), so it cannot flake.
PATIENCE_S = 10.0


async def take(limiter: Limiter, *, inp: int = 0, out: int = 0, model: str = MODEL) -> Permit:
    """Acquire, failing the test if it does not complete within PATIENCE_S."""
    return await asyncio.wait_for(
        limiter.acquire(model=model, input_tokens=inp, output_tokens=out), PATIENCE_S
    )


async def blocks(
    limiter: Limiter, *, inp: int = 0, out: int = 0, model: str = MODEL, within_s: float = 0.3
) -> bool:
    """True if acquire is still waiting after `within_s` (it is then cancelled)."""
    try:
        await asyncio.wait_for(
            limiter.acquire(model=model, input_tokens=inp, output_tokens=out), within_s
        )
    except TimeoutError:
        return True
    return False


def sonnet_config(
    *,
    requests: tuple[float, float] = (BIG, BIG),
    input_tokens: tuple[float, float] = (BIG, BIG),
    output_tokens: tuple[float, float] = (BIG, BIG),
    **tuning: float,
) -> LimiterConfig:
    """A config whose sonnet budgets are (per_minute, burst) pairs; other classes default."""

    def budget(pair: tuple[float, float]) -> Budget:
        return Budget(per_minute=pair[0], burst=pair[1])

    limits = ClassLimits(
        requests=budget(requests),
        input_tokens=budget(input_tokens),
        output_tokens=budget(output_tokens),
    )
    return LimiterConfig(classes={"sonnet": limits}, **tuning)


# What the `nats_limiter` fixture returns: connect a limiter to the test's bucket.
LimiterFactory = Callable[..., Awaitable[NatsKvLimiter]]
