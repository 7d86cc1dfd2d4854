"""LocalLimiter, the same algorithm in memory: input checks, waits, refunds, cancels, pauses."""

from __future__ import annotations

import asyncio
import time

import pytest

from shared.errors import BadInputError
from shared.llm.limiter import LocalLimiter, open_limiter
from shared.llm.limiting import Limiter, Permit
from tests.shared.llm_limiter.helpers import (
    MODEL,
    NEVER,
    PATIENCE_S,
    blocks,
    sonnet_config,
    take,
)


def test_local_limiter_satisfies_the_protocol() -> None:
    assert isinstance(LocalLimiter(), Limiter)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"model": "", "input_tokens": 1, "output_tokens": 1},
        {"model": None, "input_tokens": 1, "output_tokens": 1},
        {"model": MODEL, "input_tokens": -1, "output_tokens": 1},
        {"model": MODEL, "input_tokens": 1.5, "output_tokens": 1},
        {"model": MODEL, "input_tokens": True, "output_tokens": 1},
        {"model": MODEL, "input_tokens": 1, "output_tokens": "2"},
    ],
)
async def test_acquire_rejects_bad_input_and_reserves_nothing(kwargs: dict[str, object]) -> None:
    limiter = LocalLimiter(sonnet_config(requests=(NEVER, 1)))
    with pytest.raises(BadInputError):
        await limiter.acquire(**kwargs)  # type: ignore[arg-type]
    # The single request slot is still there.
    await take(limiter, inp=1, out=1)


async def test_settle_and_pause_reject_bad_input() -> None:
    limiter = LocalLimiter()
    permit = await limiter.acquire(model=MODEL, input_tokens=1, output_tokens=1)
    with pytest.raises(BadInputError):
        await limiter.settle("permit", input_tokens=1, output_tokens=1)  # type: ignore[arg-type]
    with pytest.raises(BadInputError):
        await limiter.settle(permit, input_tokens=-1, output_tokens=1)
    for until in (float("nan"), "soon", True):
        with pytest.raises(BadInputError):
            await limiter.pause(model=MODEL, until=until)  # type: ignore[arg-type]
    assert limiter.paused_until(MODEL) == 0.0


async def test_permit_records_class_and_reservation() -> None:
    permit = await LocalLimiter().acquire(model="claude-haiku-4-5", input_tokens=7, output_tokens=9)
    assert permit == Permit(model_class="haiku", input_tokens=7, output_tokens=9)


async def test_burst_is_admitted_at_once_then_the_next_waits() -> None:
    limiter = LocalLimiter(sonnet_config(requests=(NEVER, 3)))
    for _ in range(3):
        await take(limiter)
    assert await blocks(limiter)


async def test_classes_have_separate_budgets() -> None:
    limiter = LocalLimiter(sonnet_config(requests=(NEVER, 1)))
    await limiter.acquire(model=MODEL, input_tokens=0, output_tokens=0)
    # Sonnet is spent; haiku's default budget is untouched.
    await take(limiter, model="claude-haiku-4-5")


async def test_acquire_paces_at_the_configured_rate() -> None:
    limiter = LocalLimiter(sonnet_config(requests=(600, 1)))  # 10/s, no burst
    started = time.monotonic()
    for _ in range(4):
        await limiter.acquire(model=MODEL, input_tokens=0, output_tokens=0)
    # Lower bound only: 3 intervals of 0.1 s must have passed.
    assert time.monotonic() - started >= 0.3 - 0.01


async def test_settle_refund_lets_a_waiting_request_through() -> None:
    limiter = LocalLimiter(sonnet_config(output_tokens=(NEVER, 1000)))
    permit = await limiter.acquire(model=MODEL, input_tokens=0, output_tokens=1000)
    waiter = asyncio.create_task(limiter.acquire(model=MODEL, input_tokens=0, output_tokens=500))
    await asyncio.sleep(0.05)
    assert not waiter.done()  # nothing left and nothing refills
    await limiter.settle(permit, input_tokens=0, output_tokens=200)  # 800 come back
    await asyncio.wait_for(waiter, PATIENCE_S)


async def test_settle_charge_puts_the_budget_in_debt() -> None:
    limiter = LocalLimiter(sonnet_config(output_tokens=(NEVER, 1000)))
    permit = await limiter.acquire(model=MODEL, input_tokens=0, output_tokens=500)
    await limiter.settle(permit, input_tokens=0, output_tokens=1000)  # used 500 more
    assert await blocks(limiter, out=1)


async def test_oversize_request_goes_through_on_a_full_bucket() -> None:
    limiter = LocalLimiter(sonnet_config(output_tokens=(NEVER, 100)))
    await take(limiter, out=5000)
    assert await blocks(limiter, out=1)


async def test_cancelled_unbooked_waiter_reserves_nothing() -> None:
    limiter = LocalLimiter(sonnet_config(output_tokens=(NEVER, 100)))
    await take(limiter, out=50)
    assert await blocks(limiter, out=80)  # does not fit: waits without booking
    await take(limiter, out=50)


async def test_cancelled_booked_waiter_gives_its_slot_back() -> None:
    # 1 output token/s; slots up to 100 s ahead are booked, so the waiter holds one.
    limiter = LocalLimiter(sonnet_config(output_tokens=(60, 100), book_ahead_s=100))
    await take(limiter, out=100)
    assert await blocks(limiter, out=50)  # booked ~50 s ahead, then cancelled
    await asyncio.sleep(0)  # the refund runs as its own task
    booked, wait = limiter.try_book_now("sonnet", (1.0, 0.0, 50.0))
    # Without the refund this slot would be ~100 s away.
    assert booked and 45 < wait <= 50


async def test_pause_holds_acquire_until_it_ends() -> None:
    limiter = LocalLimiter()
    until = time.time() + 0.3
    await limiter.pause(model=MODEL, until=until)
    assert limiter.paused_until(MODEL) == until
    await limiter.acquire(model=MODEL, input_tokens=1, output_tokens=1)
    assert time.time() >= until
    # Other classes are not paused.
    assert limiter.paused_until("claude-haiku-4-5") == 0.0


async def test_a_slot_inside_a_pause_is_booked_anew_after_it() -> None:
    """Slots voided by a pause must not all go at its end: they are re-booked, paced."""
    limiter = LocalLimiter(sonnet_config(requests=(240, 1)))  # one every 0.25 s
    started = time.monotonic()
    await take(limiter)  # t = 0
    second = asyncio.create_task(take(limiter))  # booked for t = 0.25
    await asyncio.sleep(0.05)
    await limiter.pause(model=MODEL, until=time.time() + 0.45)  # until t = 0.5
    await second  # re-booked at the pause's end: t = 0.5
    await take(limiter)
    # Had the voided slot been kept, this third one would have gone at t = 0.5 as well.
    assert time.monotonic() - started >= 0.75 - 0.02


async def test_pause_only_extends_and_is_capped() -> None:
    limiter = LocalLimiter(sonnet_config(max_pause_s=30))
    now = time.time()
    await limiter.pause(model=MODEL, until=now + 10)
    await limiter.pause(model=MODEL, until=now + 5)  # shorter: ignored
    await limiter.pause(model=MODEL, until=now - 5)  # past: ignored
    assert limiter.paused_until(MODEL) == now + 10
    await limiter.pause(model=MODEL, until=now + 10_000)  # bogus retry-after: capped
    assert now + 10 < limiter.paused_until(MODEL) <= time.time() + 30


async def test_open_limiter_builds_each_mode() -> None:
    assert await open_limiter(mode="off") is None
    assert isinstance(await open_limiter(mode="local"), LocalLimiter)
    with pytest.raises(BadInputError):
        await open_limiter(mode="nats")  # no URL
    with pytest.raises(BadInputError):
        await open_limiter(mode="redis")  # type: ignore[arg-type]
