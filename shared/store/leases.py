"""hold_lock: wait for a named lease, keep it renewed while the block runs, release it after.

A holder can stall past the TTL (a long GC pause, SIGSTOP, a starved event loop): its
renewals stop, another worker takes the lease over and starts the same work. So the block
gets a HeldLease: `check()` right before work only the holder may do (a model call) raises
LeaseLostError once the lease expired or changed hands, and `fence` goes with each write
so the store drops a write whose writer no longer holds the lease (checked in the same
transaction as the write).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator

from shared.errors import TransientError, is_transient
from shared.store.fence import Fence, LeaseLostError
from shared.store.protocols_state import LockRepository

log = logging.getLogger(__name__)


class LockBusyError(TransientError):
    """Another worker held the lock for the whole wait; try again later."""


class HeldLease:
    """The lease a hold_lock block holds: check it before the work, fence the writes."""

    def __init__(self, locks: LockRepository, name: str, owner: str, ttl_s: float) -> None:
        self.name, self.owner, self.ttl_s = name, owner, ttl_s
        self.locks = locks
        self.lost = False

    @property
    def fence(self) -> Fence:
        """The fence a write made under this lease carries."""
        return Fence(name=self.name, owner=self.owner)

    async def check(self) -> None:
        """Renew the lease now, or raise LeaseLostError when another worker took it over.

        A lease released by its new holder counts as lost too (that holder may have done the
        work already); one that merely lapsed, with nobody taking it, is renewed.
        """
        if not self.lost and await self.locks.renew(self.name, self.owner, ttl_s=self.ttl_s):
            return
        self.lost = True
        raise LeaseLostError(f"the lease {self.name!r} was taken over by another worker while "
                             "its holder stalled")  # fmt: skip


@contextlib.asynccontextmanager
async def hold_lock(
    locks: LockRepository,
    name: str,
    *,
    ttl_s: float = 60.0,
    wait_s: float = 120.0,
    poll_s: float = 0.1,
    owner: str | None = None,
) -> AsyncIterator[HeldLease]:
    """Hold the lease on name for the block (renewed every ttl/3); yields the held lease.

    Waiting polls the lock row (one indexed upsert per try); a crashed holder's lease
    expires after ttl_s, so nobody waits on it for longer than that.
    """
    owner = owner or uuid.uuid4().hex
    deadline = time.monotonic() + wait_s
    while True:
        if await locks.acquire(name, owner, ttl_s=ttl_s):
            break
        left = deadline - time.monotonic()
        if left <= 0:
            raise LockBusyError(f"{name!r} stayed locked by another worker for {wait_s:g} s")
        await asyncio.sleep(min(poll_s, left))
    try:
        async with renewing(HeldLease(locks, name, owner, ttl_s)) as held:
            yield held
    finally:
        await asyncio.shield(locks.release(name, owner))


@contextlib.asynccontextmanager
async def renewing(held: HeldLease) -> AsyncIterator[HeldLease]:
    """Renew an acquired lease every ttl/3 while the block runs; `held.lost` once it was lost."""
    renewer = asyncio.create_task(_keep_renewed(held))
    try:
        yield held
    finally:
        renewer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewer


async def _keep_renewed(held: HeldLease) -> None:
    locks, name, owner, ttl_s = held.locks, held.name, held.owner, held.ttl_s
    while True:
        await asyncio.sleep(ttl_s / 3)
        try:
            if not await locks.renew(name, owner, ttl_s=ttl_s):
                held.lost = True
                log.warning("lock %r was lost before its holder finished", name)
                return
        except Exception as exc:  # the holder's work must not fail because renewing did
            log.warning("renewing lock %r failed: %s", name, exc)
            if not is_transient(exc):
                return
