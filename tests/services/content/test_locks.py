"""The per-topic generation lease in the SQLite store."""

from __future__ import annotations

import asyncio

import pytest

from services.content.locks import TopicBusyError, release, topic_lease, try_acquire
from shared.store import Store


async def test_a_lease_excludes_other_owners_until_released(store: Store) -> None:
    assert await try_acquire(store, "verlof", "a", ttl=60)
    assert await try_acquire(store, "verlof", "a", ttl=60)  # the holder may renew
    assert not await try_acquire(store, "verlof", "b", ttl=60)
    assert await try_acquire(store, "onboarding", "b", ttl=60)  # other topics are free
    await release(store, "verlof", "b")  # not the holder: nothing happens
    assert not await try_acquire(store, "verlof", "b", ttl=60)
    await release(store, "verlof", "a")
    assert await try_acquire(store, "verlof", "b", ttl=60)


async def test_an_expired_lease_is_taken_over(store: Store) -> None:
    assert await try_acquire(store, "verlof", "crashed", ttl=0.01)
    await asyncio.sleep(0.05)
    assert await try_acquire(store, "verlof", "next", ttl=60)


async def test_topic_lease_waits_then_gives_up_as_transient(store: Store) -> None:
    order: list[str] = []
    holding = asyncio.Event()

    async def holder() -> None:
        async with topic_lease(store, "verlof"):
            order.append("first in")
            holding.set()
            await asyncio.sleep(0.3)
            order.append("first out")

    task = asyncio.create_task(holder())
    await holding.wait()
    async with topic_lease(store, "verlof", wait=30):
        order.append("second in")
    await task
    assert order == ["first in", "first out", "second in"]

    assert await try_acquire(store, "verlof", "someone", ttl=60)
    with pytest.raises(TopicBusyError, match="being generated") as info:
        async with topic_lease(store, "verlof", wait=0.3):
            pass
    assert info.value.transient
