"""Contract: locks (atomic lease, renew, owner-only release) and idempotency keys."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from shared.errors import BadInputError
from shared.store import LockBusyError, Store, hold_lock, open_store

ROOT = Path(__file__).resolve().parents[3]
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


async def test_one_of_many_tasks_gets_the_lease(store: Store) -> None:
    owners = [f"worker-{i}" for i in range(20)]
    results = await asyncio.gather(*(store.locks.acquire("topic:okr", o, ttl_s=30) for o in owners))
    assert results.count(True) == 1
    holder = owners[results.index(True)]
    lease = await store.locks.get("topic:okr")
    assert lease is not None and lease.owner == holder and lease.expires_at > lease.acquired_at
    assert await store.locks.acquire("topic:okr", holder, ttl_s=30)  # the holder re-takes it
    again = await store.locks.get("topic:okr")
    assert again is not None and again.acquired_at == lease.acquired_at
    other = next(o for o in owners if o != holder)
    assert not await store.locks.release("topic:okr", other)  # only the owner releases
    assert not await store.locks.renew("topic:okr", other, ttl_s=30)
    assert await store.locks.renew("topic:okr", holder, ttl_s=60)
    assert await store.locks.release("topic:okr", holder)
    assert await store.locks.get("topic:okr") is None
    assert await store.locks.acquire("topic:okr", other, ttl_s=30)
    assert await store.locks.acquire("topic:agile", holder, ttl_s=30)  # names are independent


async def test_an_expired_lease_is_taken_over_and_cannot_be_renewed(store: Store) -> None:
    assert await store.locks.acquire("l", "crashed", ttl_s=0.05)
    assert not await store.locks.acquire("l", "next", ttl_s=30)
    await asyncio.sleep(0.1)
    assert await store.locks.get("l") is None
    assert await store.locks.acquire("l", "next", ttl_s=30)
    assert not await store.locks.renew("l", "crashed", ttl_s=30)  # taken over: lost
    lease = await store.locks.get("l")
    assert lease is not None and lease.owner == "next"
    assert not await store.locks.release("l", "crashed")
    with pytest.raises(BadInputError):
        await store.locks.acquire("l", "next", ttl_s=0)
    with pytest.raises(BadInputError):
        await store.locks.acquire("", "next", ttl_s=1)


async def test_a_lapsed_lease_nobody_took_is_renewed_by_its_holder(store: Store) -> None:
    assert await store.locks.acquire("late", "slow", ttl_s=0.05)
    await asyncio.sleep(0.1)  # its renewal comes late
    assert await store.locks.get("late") is None
    assert await store.locks.renew("late", "slow", ttl_s=30)  # nobody took it: still slow's
    assert not await store.locks.acquire("late", "other", ttl_s=30)
    assert await store.locks.release("late", "slow")
    assert not await store.locks.renew("late", "slow", ttl_s=30)  # released: gone


async def test_tasks_take_turns_and_never_overlap(store: Store) -> None:
    inside: list[str] = []
    overlaps = 0

    async def worker(name: str) -> None:
        nonlocal overlaps
        for _ in range(3):
            while True:
                if await store.locks.acquire("turns", name, ttl_s=30):
                    break
                await asyncio.sleep(0.002)
            if inside:
                overlaps += 1
            inside.append(name)
            await asyncio.sleep(0.003)
            inside.remove(name)
            assert await store.locks.release("turns", name)

    await asyncio.gather(*(worker(f"w{i}") for i in range(5)))
    assert overlaps == 0


def test_two_processes_contend_for_one_lease(tmp_path: Path) -> None:
    db = tmp_path / "locks.db"
    asyncio.run(_migrate(f"sqlite:///{db}"))
    log = tmp_path / "log.txt"
    command = [sys.executable, "-m", "tests.shared.store._locker", str(db), str(log)]
    procs = [
        subprocess.Popen([*command, f"p{i}"], cwd=ROOT, stderr=subprocess.PIPE) for i in range(2)
    ]
    results = [(p.wait(timeout=60), p.stderr.read().decode()) for p in procs]  # type: ignore[union-attr]
    assert results == [(0, "")] * 2
    events = log.read_text().split()
    assert len(events) == 2 * 2 * 10  # each process entered and left ten times
    depth = 0
    for event in events:  # enter/leave strictly alternate: never two holders at once
        depth += 1 if event.startswith("enter") else -1
        assert depth in (0, 1), events
    assert {e.split(":")[1] for e in events} == {"p0", "p1"}


async def _migrate(url: str) -> None:
    store = await open_store(url)
    await store.close()


async def test_idempotency_key_is_inserted_once_until_it_expires(store: Store) -> None:
    scope = "content.requested"
    racing = await asyncio.gather(
        *(store.idempotency.put_if_absent(scope, "ev-1", {"n": i}, ttl_s=60, now=T0)
          for i in range(10))
    )  # fmt: skip
    assert racing.count(True) == 1
    record = await store.idempotency.get(scope, "ev-1", now=T0 + timedelta(seconds=30))
    assert record is not None and record.value == {"n": racing.index(True)}
    assert record.created_at == T0 and record.expires_at == T0 + timedelta(seconds=60)
    assert await store.idempotency.get("other-scope", "ev-1", now=T0) is None
    later = T0 + timedelta(seconds=61)
    assert await store.idempotency.get(scope, "ev-1", now=later) is None
    assert await store.idempotency.put_if_absent(scope, "ev-1", {"n": 99}, ttl_s=60, now=later)
    again = await store.idempotency.get(scope, "ev-1", now=later)
    assert again is not None and again.value == {"n": 99}
    for i in range(5):
        await store.idempotency.put_if_absent(scope, f"old-{i}", {}, ttl_s=1, now=T0)
    assert await store.idempotency.purge_expired(now=later, limit=3) == 3
    with pytest.raises(BadInputError):
        await store.idempotency.put_if_absent(scope, "", {}, ttl_s=1)
    with pytest.raises(BadInputError):
        await store.idempotency.put_if_absent(scope, "k", {}, ttl_s=-1)


async def test_sqlite_idempotency_inserts_purge_expired_rows(tmp_path: Path) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'keys.db'}")
    try:
        for i in range(20):
            await store.idempotency.put_if_absent("s", f"old-{i}", {}, ttl_s=1, now=T0)
        later = T0 + timedelta(hours=1)
        await store.idempotency.put_if_absent("s", "new", {}, ttl_s=1, now=later)
        # Each insert removes a bounded batch of expired rows: constant work per request.
        assert await store.idempotency.purge_expired(now=later) == 20 - 8
    finally:
        await store.close()


async def test_hold_lock_waits_renews_and_releases(store: Store) -> None:
    order: list[str] = []

    async def job(name: str, hold: float) -> None:
        async with hold_lock(store.locks, "gen:okr", ttl_s=0.5, wait_s=10, poll_s=0.01):
            order.append(f"in {name}")
            await asyncio.sleep(hold)  # longer than the ttl: the renewer keeps it
            order.append(f"out {name}")

    await asyncio.gather(job("a", 1.2), job("b", 0.05))
    assert order in (["in a", "out a", "in b", "out b"], ["in b", "out b", "in a", "out a"])
    assert await store.locks.get("gen:okr") is None  # released afterwards


async def test_hold_lock_gives_up_after_the_wait(store: Store) -> None:
    assert await store.locks.acquire("gen:busy", "someone-else", ttl_s=30)
    with pytest.raises(LockBusyError, match=r"stayed locked by another worker for 0\.1 s") as info:
        async with hold_lock(store.locks, "gen:busy", ttl_s=30, wait_s=0.1, poll_s=0.02):
            pytest.fail("the block must not run")
    assert info.value.transient
    lease = await store.locks.get("gen:busy")
    assert lease is not None and lease.owner == "someone-else"


async def test_a_fenced_write_lands_only_while_its_writer_holds_the_lease(store: Store) -> None:
    from shared.store import Fence, LeaseLostError

    assert await store.locks.acquire("content:okr", "a", ttl_s=0.05)
    mine = Fence(name="content:okr", owner="a")
    await store.content.set_part(
        "okr", "article", {"title": "A"}, prompt_version="v", topic_fingerprint="f", fence=mine
    )
    await asyncio.sleep(0.1)  # a's lease expires (it stalled) and b takes it over
    assert await store.locks.acquire("content:okr", "b", ttl_s=30)
    with pytest.raises(LeaseLostError, match="taken over"):
        await store.content.set_part(
            "okr", "article", {"title": "A2"}, prompt_version="v", topic_fingerprint="f", fence=mine
        )
    theirs = Fence(name="content:okr", owner="b")
    await store.content.set_part(
        "okr", "slides", {"slides": []}, prompt_version="v", topic_fingerprint="f", fence=theirs
    )
    stored = await store.content.get("okr")
    assert (
        stored is not None and stored.article == {"title": "A"} and stored.slides == {"slides": []}
    )


async def test_a_held_lease_check_fails_once_the_lease_expired(store: Store) -> None:
    from shared.store import LeaseLostError

    async with hold_lock(store.locks, "gen:stall", ttl_s=0.5, wait_s=1, poll_s=0.01) as held:
        await held.check()  # held: renewed
        assert await store.locks.release("gen:stall", held.owner)  # as if it had expired
        assert await store.locks.acquire("gen:stall", "other", ttl_s=30)
        with pytest.raises(LeaseLostError):
            await held.check()
        assert held.lost and held.fence.owner == held.owner
    lease = await store.locks.get("gen:stall")
    assert lease is not None and lease.owner == "other"  # the lost holder released nothing
