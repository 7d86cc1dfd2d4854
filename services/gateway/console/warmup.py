"""The first start: a question typed while the sample handbook is still being read waits for it.

On a fresh data dir the extractor registers the bundled sample handbook before its rpc
subjects are served, so once `r42 up` shows the prompt the store already lists those sources
(ids `sample-…`). Answering before they are read would say "that is not in the knowledge
graph" about what is merely not read yet; the console says so in one line and waits instead.
"""

from __future__ import annotations

import asyncio
import builtins
from typing import Protocol

from shared.store import Source, SourceStatus

SAMPLE_PREFIX = "sample-"
"""The id prefix of the sample handbook's sources (the extractor's first-start ingest)."""
DONE = frozenset({"completed", "failed", "cancelled"})
WAIT_S = 120.0
POLL_S = 0.05
READING = "Het voorbeeldhandboek wordt nog ingelezen ({done}/{total})…"
NOT_DONE = "Het voorbeeldhandboek is nog niet helemaal ingelezen; het antwoord kan onvolledig zijn."


class SourceLister(Protocol):
    """The store's sources, read-only."""

    async def list(
        self, *, status: SourceStatus | None = None, limit: int = 100
    ) -> builtins.list[Source]:
        """Sources, newest first."""
        ...


async def sample_progress(sources: SourceLister) -> tuple[int, int] | None:
    """(files read, files) while the sample handbook is being read; None once it is (or none)."""
    sample = [s for s in await sources.list(limit=1000) if s.id.startswith(SAMPLE_PREFIX)]
    done = sum(1 for s in sample if s.status in DONE)
    return (done, len(sample)) if done < len(sample) else None


async def wait_for_sample(
    sources: SourceLister, *, wait_s: float = WAIT_S, poll_s: float = POLL_S
) -> bool:
    """Poll until the sample handbook is read; False when `wait_s` passed first."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    while await sample_progress(sources) is not None:
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(poll_s)
    return True
