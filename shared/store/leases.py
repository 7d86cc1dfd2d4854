"""hold_lock: wait for a named lease, keep it renewed while the block runs, release it after."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator

from shared.errors import TransientError, is_transient
from shared.store.protocols_state import LockRepository

log = logging.getLogger(__name__)


class LockBusyError(TransientError):
    """Another worker held the lock for the whole wait; try again later."""


@contextlib.asynccontextmanager
async def hold_lock(
    locks: LockRepository,
    name: str,
    *,
    ttl_s: float = 60.0,
    wait_s: float = 120.0,
    poll_s: float = 0.1,
    owner: str | None = None,
) -> AsyncIterator[str]:
    """Hold the lease on name for the block (renewed every ttl/3); yields the owner token.

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
    renewer = asyncio.create_task(_keep_renewed(locks, name, owner, ttl_s))
    try:
        yield owner
    finally:
        renewer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await renewer
        await asyncio.shield(locks.release(name, owner))


async def _keep_renewed(locks: LockRepository, name: str, owner: str, ttl_s: float) -> None:
    while True:
        await asyncio.sleep(ttl_s / 3)
        try:
            if not await locks.renew(name, owner, ttl_s=ttl_s):
                log.warning("lock %r was lost before its holder finished", name)
                return
        except Exception as exc:  # the holder's work must not fail because renewing did
            log.warning("renewing lock %r failed: %s", name, exc)
            if not is_transient(exc):
                return
