"""Stopping a service mid-call loses no llm.call.logged: consumers stop, then the sink drains."""

from __future__ import annotations

import contextlib
from pathlib import Path

from services.extractor.uploads import register_upload
from shared.bus import publish_event
from tests.fakes.anthropic_server import FakeAnthropic, slow
from tests.services.extractor.conftest import (
    EventLog,
    kg,
    running_extractor,
    sections,
    topic,
    until,
)


async def test_stopping_during_an_extraction_logs_every_llm_call(
    nats_url: str, unique: str, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.enqueue(kg([topic("een")]), slow(kg([topic("twee")]), 60))
    ns = f"tl{unique}"
    log = await EventLog(ns).start(nats_url)
    try:
        async with running_extractor(
            nats_url=nats_url, namespace=ns, fake=fake_anthropic,
            store_url=f"sqlite:///{tmp_path / 's.db'}",
        ) as ctx:  # fmt: skip
            reg = await register_upload(
                ctx.store, name="lang.md", text=sections(4), uploaded_by="U1", actor="test"
            )
            assert reg.event is not None
            await publish_event(ctx.broker, reg.event, namespace=ns)
            await until(lambda: len(fake_anthropic.requests) >= 2)
        # The service stopped with its second call in flight (the reply takes 60 s).
        with contextlib.suppress(TimeoutError):
            await log.wait_for(lambda: len(log.of("llm.call.logged")) >= 2, timeout=5)
    finally:
        await log.close()
    calls = [e.record for e in log.of("llm.call.logged")]
    assert len(calls) == len(fake_anthropic.requests) == 2, calls
    assert [c.ok for c in calls] == [True, False]  # the cancelled call is logged too
