"""One flow, one correlation id: every event of an ingest carries the upload's."""

from __future__ import annotations

from pathlib import Path

from services.extractor.uploads import register_upload
from shared.bus import publish_event

from .conftest import EventLog, running_extractor, sections


async def test_every_event_of_an_ingest_carries_the_uploads_correlation_id(
    nats_url: str, unique: str, tmp_path: Path
) -> None:
    ns = f"c{unique}"
    log = await EventLog(ns).start(nats_url)
    try:
        async with running_extractor(
            nats_url=nats_url, namespace=ns, store_url=f"sqlite:///{tmp_path / 's.db'}"
        ) as ctx:
            reg = await register_upload(ctx.store, name="doc.md", text=sections(3),
                                        uploaded_by="U1", actor="test")  # fmt: skip
            assert reg.event is not None and reg.source is not None
            await publish_event(ctx.broker, reg.event, namespace=ns)
            await log.wait_for(lambda: log.of("kb.updated"), 20)
    finally:
        await log.close()
    # llm.call.logged is telemetry about a call, not an event of the flow.
    flow = [e for e in log.events if e.subject not in ("source.uploaded", "llm.call.logged")]
    subjects = {e.subject for e in flow}
    assert {"chunk.extracted", "source.progress", "source.completed", "kb.updated"} <= subjects
    assert {e.correlation_id for e in flow} == {reg.event.correlation_id}
