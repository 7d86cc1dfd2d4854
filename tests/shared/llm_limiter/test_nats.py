"""NatsKvLimiter against the real nats-server: CAS, shared budgets, refunds, pauses, cancels."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import nats
import pytest

from shared.errors import BadInputError
from shared.llm.limiter import NatsKvLimiter, open_limiter
from shared.llm.limiter_kv import bind_bucket, decode_state, read, write
from shared.llm.limiting import Limiter
from tests.shared.llm_limiter.helpers import (
    MODEL,
    NEVER,
    PATIENCE_S,
    LimiterFactory,
    blocks,
    sonnet_config,
    take,
)


async def eventually(condition: Callable[[], bool]) -> None:
    """Poll a condition that a watcher makes true asynchronously (fails after PATIENCE_S)."""
    deadline = time.monotonic() + PATIENCE_S
    while not condition():
        assert time.monotonic() < deadline, "condition never became true"
        await asyncio.sleep(0.005)


async def test_nats_limiter_satisfies_the_protocol(nats_limiter: LimiterFactory) -> None:
    assert isinstance(await nats_limiter(), Limiter)


async def test_kv_write_is_a_compare_and_swap(nats_url: str, bucket: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        kv = await bind_bucket(nc, bucket, op_timeout_s=5)
        first = await write(kv, "gcra.sonnet", b"[1, 1, 1]", None)
        assert first is not None
        assert await write(kv, "gcra.sonnet", b"[2, 2, 2]", None) is None  # exists already
        second = await write(kv, "gcra.sonnet", b"[3, 3, 3]", first)
        assert second is not None and second > first
        assert await write(kv, "gcra.sonnet", b"[4, 4, 4]", first) is None  # stale revision
        assert await read(kv, "gcra.sonnet") == (b"[3, 3, 3]", second)
    finally:
        await nc.close()


async def test_two_instances_admit_exactly_the_shared_burst(nats_limiter: LimiterFactory) -> None:
    config = sonnet_config(requests=(NEVER, 10))
    a, b = await nats_limiter(config), await nats_limiter(config)

    async def attempt(limiter: NatsKvLimiter) -> bool:
        try:
            await asyncio.wait_for(
                limiter.acquire(model=MODEL, input_tokens=0, output_tokens=0), 3.0
            )
        except TimeoutError:
            return False
        return True

    results = await asyncio.gather(*(attempt(x) for x in (a, b) * 12))
    assert sum(results) == 10
    assert a.stats.admitted + b.stats.admitted == 10


async def test_stale_revision_is_retried_not_double_spent(
    nats_limiter: LimiterFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = sonnet_config(requests=(NEVER, 3))
    a, b = await nats_limiter(config), await nats_limiter(config)
    await take(b)
    stale = await read(a._kv, "gcra.sonnet")  # what a slow reader would still believe
    await take(b)
    real_get = a._mirror.get
    handed_out = []

    def stale_once(key: str):  # type: ignore[no-untyped-def]
        if not handed_out:
            handed_out.append(key)
            return stale
        return real_get(key)

    monkeypatch.setattr(a._mirror, "get", stale_once)
    await take(a)  # decided on the stale state: the CAS must refuse it, then retry
    assert a.stats.cas_conflicts >= 1
    assert await blocks(a) and await blocks(b)  # 3 spent, not 2


async def test_settle_refund_on_one_instance_releases_a_waiter_on_another(
    nats_limiter: LimiterFactory,
) -> None:
    config = sonnet_config(output_tokens=(NEVER, 1000))
    a, b = await nats_limiter(config), await nats_limiter(config)
    permit = await take(a, out=1000)
    waiter = asyncio.create_task(b.acquire(model=MODEL, input_tokens=0, output_tokens=500))
    await asyncio.sleep(0.1)
    assert not waiter.done()  # nothing left and nothing refills
    await a.settle(permit, input_tokens=0, output_tokens=300)
    await asyncio.wait_for(waiter, PATIENCE_S)  # b heard of the refund through its watcher


async def test_settle_charge_is_shared(nats_limiter: LimiterFactory) -> None:
    config = sonnet_config(input_tokens=(NEVER, 1000))
    a, b = await nats_limiter(config), await nats_limiter(config)
    permit = await take(a, inp=400)
    await a.settle(permit, input_tokens=1000, output_tokens=0)  # 600 more than reserved
    assert await blocks(b, inp=1)


async def test_cancelled_acquires_leak_nothing(nats_limiter: LimiterFactory) -> None:
    """Cancel acquires at every point of their life; only completed ones may have spent."""
    config = sonnet_config(output_tokens=(NEVER, 100))
    a = await nats_limiter(config)
    await take(a)  # watcher up, so the cancellations below land inside decisions
    spent = 0
    for i in range(30):
        task = asyncio.create_task(a.acquire(model=MODEL, input_tokens=0, output_tokens=10))
        for _ in range(i % 15):
            await asyncio.sleep(0)
        task.cancel()
        (outcome,) = await asyncio.gather(task, return_exceptions=True)
        if not isinstance(outcome, BaseException):
            spent += 10
    await a.aclose()  # waits for the refunds of cancelled bookings
    assert spent < 100, "the test needs some cancellations to land"
    fresh = await nats_limiter(config)
    await take(fresh, out=100 - spent)  # exactly what was not spent is still there
    assert await blocks(fresh, out=1)


async def test_pause_fans_out_to_other_instances(nats_limiter: LimiterFactory) -> None:
    a, b = await nats_limiter(), await nats_limiter()
    await take(b)  # b's watcher is running
    until = time.time() + 0.5
    await a.pause(model=MODEL, until=until)
    await eventually(lambda: b.paused_until(MODEL) == until)  # learned through the KV watch
    await take(b)
    assert time.time() >= until
    assert b.paused_until("claude-haiku-4-5") == 0.0  # per class


async def test_pause_never_shortens_and_late_starters_see_it(
    nats_limiter: LimiterFactory,
) -> None:
    a, b = await nats_limiter(), await nats_limiter()
    long_until = time.time() + 30
    await a.pause(model=MODEL, until=long_until)
    await b.pause(model=MODEL, until=time.time() + 1)
    assert b.paused_until(MODEL) == long_until  # b adopted the longer shared pause
    c = await nats_limiter()
    assert await blocks(c)  # c starts, reads the shared pause, and waits
    assert c.paused_until(MODEL) == long_until


async def test_bad_input_is_rejected_before_anything_is_created(nats_url: str) -> None:
    with pytest.raises(BadInputError):
        await NatsKvLimiter.connect("", bucket="ok")
    with pytest.raises(BadInputError):
        await NatsKvLimiter.connect(nats_url, bucket="bad.name")
    with pytest.raises(BadInputError):
        await NatsKvLimiter.from_client("nats://x", bucket="ok")  # type: ignore[arg-type]


async def test_from_client_leaves_the_connection_open(nats_url: str, bucket: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        limiter = await NatsKvLimiter.from_client(nc, bucket=bucket)
        assert limiter.mode == "nats"
        await take(limiter)
        await limiter.aclose()
        assert nc.is_connected
    finally:
        await nc.close()


async def test_open_limiter_nats_mode_shares_the_bucket(nats_url: str, bucket: str) -> None:
    limiter = await open_limiter(mode="nats", nats_url=nats_url, bucket=bucket)
    assert isinstance(limiter, NatsKvLimiter) and limiter.mode == "nats"
    await take(limiter, inp=5, out=7)
    nc = await nats.connect(nats_url)
    try:
        kv = await bind_bucket(nc, bucket, op_timeout_s=5)
        raw, revision = await read(kv, "gcra.sonnet")
        assert revision is not None and decode_state(raw)[0] > 0
    finally:
        await nc.close()
        await limiter.aclose()
