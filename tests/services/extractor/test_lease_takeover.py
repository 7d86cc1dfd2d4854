"""A replica that stalls past its source lease stops instead of extracting the source again.

Two replicas share one SQLite file. Replica A stalls (tests/fakes/stall.py) right after it
published its first chunk: its lease renewals wait, the lease lapses and replica B takes
the source over. A resumes while B is still at work: without the lease check it would ask
the model for the chunks B is extracting.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from services.extractor.cancel import SourceTasks
from services.extractor.merge import merge_chunk
from services.extractor.ports import ExtractorStore
from services.extractor.runner import run_source
from services.extractor.uploads import register_upload
from shared.bus import ChunkExtracted
from shared.kb import chunk_text
from shared.store import Store, open_store
from tests.fakes.anthropic_server import FakeAnthropic, Reply
from tests.fakes.stall import Stall, StalledStore

from .conftest import OPTIONS, chunk_position, markdown_responder, sections, until

LEASED = dataclasses.replace(OPTIONS, lease_ttl_s=0.3)
WAIT = 15.0


def publisher(store: Store, stall: Stall | None = None) -> Any:
    """Merge each chunk result at once; with a stall, stop the replica after its first one."""

    async def publish(event: Any) -> None:
        if isinstance(event, ChunkExtracted):
            await merge_chunk(store=store, event=event, publish=publish)
            if stall is not None and event.chunk_index == 0:
                stall.frozen = True
                await stall.hold()

    return publish


async def test_a_stalled_replica_taken_over_asks_the_model_for_no_chunk_again(
    fake_anthropic: FakeAnthropic, fake_llm: Any, store: Store, tmp_path: Path
) -> None:
    respond = markdown_responder()

    def paced(body: Any) -> Reply:  # B's first chunk takes a while: A resumes meanwhile
        return replace(respond(body), delay=0.8 if chunk_position(body)[0] == 1 else 0.0)

    fake_anthropic.default = paced
    text = sections(3)
    count = len(chunk_text(text, max_chars=OPTIONS.max_chunk_chars, overlap_chars=0))
    reg = await register_upload(store, name="a.md", text=text, uploaded_by="U1", actor="test")
    assert reg.source is not None and count == 3
    source_id = reg.source.id
    replica_b = await open_store(f"sqlite:///{tmp_path / 'kb.db'}")  # the same file
    stall = Stall()
    a_store = StalledStore(store, stall, {"locks": {"renew": lambda: stall.frozen}})
    try:

        def run(on: Any, publish: Any) -> Any:
            return run_source(store=cast(ExtractorStore, on), source_id=source_id,
                              publish=publish, limiter=None, options=LEASED, tasks=SourceTasks(),
                              last_attempt=True)  # fmt: skip

        a = asyncio.create_task(run(a_store, publisher(store, stall)))
        async with asyncio.timeout(WAIT):
            await stall.reached.wait()  # A merged chunk 1 of 3, then stopped
            b = asyncio.create_task(run(replica_b, publisher(replica_b)))
            await until(lambda: len(fake_anthropic.requests) >= 2)  # B asks for chunk 2
            stall.thaw()  # A resumes while B waits for the model
            result_a = await a
            result_b = await b
        asked = sorted(chunk_position(r.body)[0] for r in fake_anthropic.requests)
        assert asked == [0, 1, 2]  # each chunk once: A asked for none after the takeover
        assert result_a.status == "processing" and result_b.status == "completed"
        source = await replica_b.sources.get(source_id)
        assert source is not None and source.status == "completed"
        assert await replica_b.sources.merged_chunks(source_id) == {0, 1, 2}
    finally:
        await replica_b.close()
