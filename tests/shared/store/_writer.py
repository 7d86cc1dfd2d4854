"""A writer process for the multi-process SQLite test (run with python -m)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from shared.store import Topic, open_store

SHARED_TOPICS = 10


async def write(db: str, index: int, rounds: int, sync_dir: Path) -> None:
    """Wait for the go signal, then upsert overlapping topics and bump a shared counter."""
    store = await open_store(f"sqlite:///{db}")
    try:
        (sync_dir / f"ready-{index}").touch()
        deadline = time.monotonic() + 30
        while not (sync_dir / "go").exists():
            if time.monotonic() > deadline:
                raise SystemExit("no go signal")
            await asyncio.sleep(0.005)
        for round_ in range(rounds):
            topics = [
                Topic(id=f"shared-{(round_ + k) % SHARED_TOPICS}", label=f"p{index} r{round_}",
                      type="concept")
                for k in range(3)
            ] + [Topic(id=f"own-{index}-{round_}", label=f"p{index}", type="role")]  # fmt: skip
            await store.topics.upsert_many(topics)
            await store.merge_progress.add("counter", topics_added=1)
            await store.merge_progress.add(f"done-{index}", topics_added=1)
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(write(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])))
