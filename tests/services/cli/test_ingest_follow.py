"""`r42 ingest --wait` ends by the store when the outcome event was missed (r42 up restarted)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from services.cli.ingest import SourceBars, _until_ended
from services.extractor.session import AdminSession
from services.extractor.uploads import register_upload
from shared.store import open_store


async def test_wait_ends_from_the_store_when_events_were_missed(tmp_path: Path) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'r42.db'}")
    try:
        reg = await register_upload(store, name="a.md", text="# A\n\nText.\n", uploaded_by="cli",
                                    actor="cli")  # fmt: skip
        session = AdminSession(store=store, nats_url=None, namespace="")
        bars = SourceBars(Progress(console=Console(quiet=True)))
        assert reg.source is not None
        source_id = reg.source.id
        bars.add(source_id, "a.md")
        waiting = asyncio.create_task(_until_ended(session, bars))
        await asyncio.sleep(2.5)
        assert not waiting.done()  # still processing: keeps waiting
        await store.sources.set_status(source_id, "completed")
        await asyncio.wait_for(waiting, 10)  # no source.completed event ever arrived
        assert not bars.ended.is_set()
    finally:
        await store.close()
