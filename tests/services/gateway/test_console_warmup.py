"""The console's first question while the sample handbook is read: progress, then the wait."""

from __future__ import annotations

import asyncio
from pathlib import Path

from services.gateway.console.warmup import READING, sample_progress, wait_for_sample
from shared.store import Source, open_store


async def test_progress_counts_the_sample_files_and_the_wait_ends_when_they_are_read(
    tmp_path: Path,
) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'kb.db'}")
    try:
        sources = store.sources
        for i, status in enumerate(("completed", "processing", "pending")):
            await sources.create(Source(id=f"sample-{i}", name=f"{i}.md", sha256=f"{i}" * 64))
            await sources.set_status(f"sample-{i}", status)  # type: ignore[arg-type]
        await sources.create(Source(id="src-own", name="eigen.md", sha256="f" * 64))  # not sample
        assert await sample_progress(sources) == (1, 3)
        assert READING.format(done=1, total=3) == "Het voorbeeldhandboek wordt nog ingelezen (1/3)…"
        assert await wait_for_sample(sources, wait_s=0.3, poll_s=0.05) is False  # still reading

        async def finish() -> None:
            await asyncio.sleep(0.2)
            await sources.set_status("sample-1", "completed")
            await sources.set_status("sample-2", "failed")  # a failed file is read too

        finishing = asyncio.create_task(finish())
        assert await wait_for_sample(sources, wait_s=10, poll_s=0.05) is True
        await finishing
        assert await sample_progress(sources) is None
    finally:
        await store.close()
