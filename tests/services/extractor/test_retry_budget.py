"""A persistent 5xx costs at most five API calls per chunk, across real redeliveries."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from services.extractor.attempts import CHUNK_ATTEMPTS, CHUNK_ATTEMPTS_PER_DELIVERY
from services.extractor.uploads import register_upload
from shared.bus import publish_event
from tests.fakes.anthropic_server import FakeAnthropic, server_error

from .conftest import EventLog, chunk_position, kg, running_extractor, sections, topic


async def test_a_persistent_500_costs_five_calls_per_chunk(
    nats_url: str, unique: str, tmp_path: Path, fake_anthropic: FakeAnthropic,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    def respond(body: object) -> object:
        index, _ = chunk_position(body)
        return kg([topic("eerste")]) if index == 0 else server_error(500)

    fake_anthropic.default = respond
    ns = f"rb{unique}"
    log = await EventLog(ns).start(nats_url)
    caplog.set_level(logging.WARNING, logger="shared.bus.consumer")
    try:
        async with running_extractor(
            nats_url=nats_url, namespace=ns, fake=fake_anthropic,
            store_url=f"sqlite:///{tmp_path / 's.db'}", max_deliver=5,
        ) as ctx:  # fmt: skip
            reg = await register_upload(
                ctx.store, name="twee.md", text=sections(2), uploaded_by="U1", actor="test"
            )
            assert reg.source is not None and reg.event is not None
            await publish_event(ctx.broker, reg.event, namespace=ctx.namespace)
            failed = await log.wait_for(lambda: log.of("source.failed", reg.source.id), 30)
            source = await ctx.store.sources.get(reg.source.id)
    finally:
        await log.close()
    per_chunk = [chunk_position(r.body)[0] for r in fake_anthropic.requests]
    assert per_chunk.count(0) == 1
    assert per_chunk.count(1) == CHUNK_ATTEMPTS  # not 5 in-call × 5 deliveries = 25
    # The first delivery spent its share and went back to JetStream; the redelivery the
    # rest, then the chunk failed for good (no third delivery, no further request).
    redelivered = [r for r in caplog.records if "failed on delivery 1/5" in r.getMessage()]
    assert len(redelivered) == 1 and CHUNK_ATTEMPTS_PER_DELIVERY < CHUNK_ATTEMPTS
    assert not [r for r in caplog.records if "failed on delivery 2/5" in r.getMessage()]
    assert source is not None and source.status == "failed"
    assert "all 5 API attempts" in failed[0].error and "chunk 2/2" in failed[0].error
