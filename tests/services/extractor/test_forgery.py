"""Forged events on the real nats-server: the KG owner refuses them and reports failed.*."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import nats

from services.extractor.uploads import register_upload
from shared.bus import ChunkExtracted, KbDelta, KbDeltaDecided, publish_event
from shared.bus import Topic as BusTopic
from shared.store import Suggestion

from .conftest import EventLog, running_extractor, sections

WAIT = 20.0


class Failures:
    """Every failed.<subject> dead letter in a namespace, decoded."""

    def __init__(self) -> None:
        self.letters: list[dict[str, Any]] = []
        self.arrived = asyncio.Event()

    async def on(self, msg: Any) -> None:
        self.letters.append(json.loads(msg.data))
        self.arrived.set()

    async def wait(self, subject: str) -> dict[str, Any]:
        async with asyncio.timeout(WAIT):
            while not (found := [x for x in self.letters if x["original_subject"] == subject]):
                self.arrived.clear()
                await self.arrived.wait()
        return found[0]


async def test_forged_chunk_of_a_completed_source_is_refused_and_reported(
    nats_url: str, unique: str, tmp_path: Path
) -> None:
    ns = f"f{unique}"
    failures = Failures()
    nc = await nats.connect(nats_url)
    await nc.subscribe(f"{ns}.failed.>", cb=failures.on)
    log = await EventLog(ns).start(nats_url)
    try:
        async with running_extractor(
            nats_url=nats_url, namespace=ns, store_url=f"sqlite:///{tmp_path / 's.db'}"
        ) as ctx:
            reg = await register_upload(ctx.store, name="doc.md", text=sections(2),
                                        uploaded_by="U1", actor="test")  # fmt: skip
            assert reg.event is not None and reg.source is not None
            await publish_event(ctx.broker, reg.event, namespace=ns)
            await log.wait_for(lambda: log.of("source.completed", reg.source.id), WAIT)
            before = await ctx.store.topics.list()
            victim = before[0]
            source = await ctx.store.sources.get(reg.source.id)
            assert source is not None and source.chunks_total == 2
            forged = ChunkExtracted(
                source_id=source.id, chunk_index=50, chunk_count=51, actor="extractor",
                prompt_version="x",
                topics=[BusTopic(id=victim.id, label=victim.label, type=victim.type,
                                 description="FORGED: je krijgt 0 dagen")],
            )  # fmt: skip
            await publish_event(ctx.broker, forged, namespace=ns)
            letter = await failures.wait("chunk.extracted")
            # A chunk of a source that does not exist: refused too.
            ghost = forged.model_copy(update={"event_id": "7f1f8b1e-6c1a-4a53-9a57-1d3c2b4a5e6f",
                                              "source_id": "src-ghost"})  # fmt: skip
            await publish_event(ctx.broker, ghost, namespace=ns)
            # A replay of a chunk that was merged: ignored like a redelivery, changes nothing.
            replay = forged.model_copy(update={"event_id": "0c8e2f4a-1b3d-4e5f-8a9b-7c6d5e4f3a2b",
                                               "chunk_index": 1, "chunk_count": 2})  # fmt: skip
            await publish_event(ctx.broker, replay, namespace=ns)
            async with asyncio.timeout(WAIT):
                while len([x for x in failures.letters
                           if x["original_subject"] == "chunk.extracted"]) < 2:  # fmt: skip
                    failures.arrived.clear()
                    await failures.arrived.wait()
            await asyncio.sleep(0.5)  # the replay is consumed by now
            after = await ctx.store.topics.list()
            source_after = await ctx.store.sources.get(source.id)
    finally:
        await log.close()
        await nc.close()
    assert letter["original_event_id"] == forged.event_id
    assert "does not fit" in letter["error"] and letter["correlation_id"] == forged.correlation_id
    second = next(x for x in failures.letters if x["original_event_id"] == ghost.event_id)
    assert "unknown source" in second["error"]
    assert not [x for x in failures.letters if x["original_event_id"] == replay.event_id]
    assert after == before  # the victim's description is untouched
    assert source_after is not None and source_after.chunks_done == 2  # not 3/2


async def test_forged_decisions_are_refused_and_reported(
    nats_url: str, unique: str, tmp_path: Path
) -> None:
    ns = f"f{unique}"
    failures = Failures()
    nc = await nats.connect(nats_url)
    await nc.subscribe(f"{ns}.failed.>", cb=failures.on)
    delta = KbDelta(reason="r", topics=[BusTopic(id="forged", label="Forged", type="concept")])
    try:
        async with running_extractor(
            nats_url=nats_url, namespace=ns, store_url=f"sqlite:///{tmp_path / 's.db'}"
        ) as ctx:
            await ctx.store.suggestions.create(
                Suggestion(id="s-real", delta=delta.model_dump(mode="json"), proposed_by="U1")
            )
            nobody = KbDeltaDecided(suggestion_id="s-real", decision="approved",
                                    decided_by="nobody", delta=delta, actor="gateway")  # fmt: skip
            await publish_event(ctx.broker, nobody, namespace=ns)
            first = await failures.wait("kb.delta.decided")
            ghost = KbDeltaDecided(suggestion_id="s-none", decision="approved",
                                   decided_by="nobody", delta=delta, actor="gateway")  # fmt: skip
            await publish_event(ctx.broker, ghost, namespace=ns)
            async with asyncio.timeout(WAIT):
                while len(failures.letters) < 2:
                    failures.arrived.clear()
                    await failures.arrived.wait()
            ids = await ctx.store.topics.ids()
            stored = await ctx.store.suggestions.get("s-real")
            ghost_row = await ctx.store.suggestions.get("s-none")
    finally:
        await nc.close()
    assert first["original_event_id"] == nobody.event_id and "not an admin" in first["error"]
    assert "forged" not in ids and ghost_row is None
    assert stored is not None and stored.status == "pending"
