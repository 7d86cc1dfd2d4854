"""A process that takes one lease ten times (run with python -m by the contention test)."""

from __future__ import annotations

import asyncio
import os
import sys

from shared.store import Store, open_store

ROUNDS = 10


async def run(db: str, log_path: str, name: str) -> None:
    """Acquire, log enter, hold briefly, log leave, release; ten times."""
    store = await open_store(f"sqlite:///{db}")
    try:
        for _ in range(ROUNDS):
            await _take(store, name)
            _log(log_path, f"enter:{name}")
            await asyncio.sleep(0.005)
            _log(log_path, f"leave:{name}")
            if not await store.locks.release("shared", name):
                raise SystemExit(f"{name} lost the lease it held")
            await asyncio.sleep(0.001)
    finally:
        await store.close()


async def _take(store: Store, name: str) -> None:
    # Another process holds it: there is nothing in this process to wait on but time.
    while True:
        if await store.locks.acquire("shared", name, ttl_s=30):
            return
        await asyncio.sleep(0.001)


def _log(path: str, line: str) -> None:
    # O_APPEND writes of one short line are atomic, so the two processes' lines never mix.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        os.write(fd, f"{line}\n".encode())
    finally:
        os.close(fd)


if __name__ == "__main__":
    asyncio.run(run(sys.argv[1], sys.argv[2], sys.argv[3]))
