"""A worker process of the start-up race test: opens each round's fresh store file at once."""

from __future__ import annotations

import asyncio
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path

from shared.store.sqlite.db import SqliteDb


async def _open(path: Path) -> str:
    # What every service does first at start-up: connect and switch the new file to WAL.
    # (Migrating after that waits on the write lock like any writer; tested elsewhere.)
    db = SqliteDb(str(path))
    await db.open()
    try:
        return await db.read(lambda c: str(c.execute("PRAGMA journal_mode").fetchone()[0]))
    finally:
        await db.close()


def open_rounds(directory: str, rounds: int, barrier: Barrier, results: Queue[object]) -> None:
    """For each round, wait for the others, then open (and migrate) that round's new file."""
    outcomes: list[str] = []

    async def run() -> None:
        for round_ in range(rounds):
            await asyncio.to_thread(barrier.wait, 30)
            try:
                outcomes.append(f"ok {await _open(Path(directory) / f'round-{round_}.db')}")
            except Exception as exc:  # reported, not raised: the test counts failures
                outcomes.append(f"round {round_}: {type(exc).__name__}: {exc}")

    asyncio.run(run())
    results.put(outcomes)
