"""The extractor service on the real nats-server: events in, graph changes and events out."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from pathlib import Path

import pytest

from services.extractor.app import (
    SAMPLE_FLAG,
    build,
    deps_of,
    ingest_sample_handbook_if_first_start,
    sample_handbook_dir,
)
from services.extractor.cancel import SourceCancelledError
from services.extractor.config import ExtractorSettings
from services.extractor.handlers import ExtractorDeps
from services.extractor.uploads import register_upload, sha256_text
from shared.bus import (
    KbDelta,
    KbDeltaDecided,
    SourceCancelled,
    SourceUploaded,
    publish_event,
)
from shared.bus import Topic as BusTopic
from shared.bus.objects import put_source_object, read_source_object
from shared.config import build_settings
from shared.kb import kb_hash
from shared.runtime.service import ServiceContext, ServiceSpec, start_service, stop_service
from shared.store import Source, Store, Suggestion, Topic, open_store
from tests.fakes.anthropic_server import FakeAnthropic, slow

from .conftest import (
    EventLog,
    kg,
    markdown_responder,
    running_extractor,
    sections,
    topic,
    until,
)


def sqlite(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 's.db'}"


async def upload(ctx: ServiceContext, name: str, text: str) -> str:
    reg = await register_upload(ctx.store, name=name, text=text, uploaded_by="U1", actor="test")
    assert reg.source is not None and reg.event is not None
    await publish_event(ctx.broker, reg.event, namespace=ctx.namespace)
    return reg.source.id


async def test_an_upload_flows_through_extraction_and_merge(
    nats_url: str, unique: str, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.default = markdown_responder()
    ns = f"x{unique}"
    log = await EventLog(ns).start(nats_url)
    try:
        async with running_extractor(
            nats_url=nats_url, namespace=ns, fake=fake_anthropic, store_url=sqlite(tmp_path)
        ) as ctx:
            source_id = await upload(ctx, "gids.md", sections(3))
            done = await log.wait_for(lambda: log.of("source.completed", source_id))
            updated = await log.wait_for(lambda: log.of("kb.updated"))
            ids = await ctx.store.topics.ids()
    finally:
        await log.close()
    assert ids == {"onderwerp-0", "onderwerp-1", "onderwerp-2"}
    assert [e.chunk_index for e in log.of("chunk.extracted", source_id)] == [0, 1, 2]
    assert [e.chunks_done for e in log.of("source.progress", source_id)] == [1, 2, 3]
    assert done[0].topics_added == 3 and done[0].chunks_total == 3
    # kb_hash is a version hash chained from the first full one (kb_hash of the ids then),
    # so the writer never re-reads every id: it is new for every change.
    assert len(updated[0].kb_hash) == 8 and updated[0].kb_hash != kb_hash(ids)
    assert set(updated[0].changed_ids) == ids
    assert len(fake_anthropic.requests) == 3


async def test_cancel_stops_the_source_within_the_call_in_flight(
    nats_url: str, unique: str, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.enqueue(kg([topic("een")]), slow(kg([topic("twee")]), 60))
    ns = f"x{unique}"
    async with running_extractor(
        nats_url=nats_url, namespace=ns, fake=fake_anthropic, store_url=sqlite(tmp_path)
    ) as ctx:
        source_id = await upload(ctx, "lang.md", sections(4))
        await until(lambda: len(fake_anthropic.requests) >= 2)
        await publish_event(
            ctx.broker, SourceCancelled(source_id=source_id, actor="U1"), namespace=ns
        )
        tasks = deps_of(ctx).tasks

        async def stopped() -> bool:
            source = await ctx.store.sources.get(source_id)
            return source is not None and source.status == "cancelled" and not tasks.running()

        # The second reply would take 60 s: ending well before proves the call was aborted.
        await until(stopped, timeout=15)
        assert len(fake_anthropic.requests) == 2
        assert await ctx.store.topics.ids() <= {"een"}


async def test_every_replica_hears_a_cancel_on_core_nats(
    nats_url: str, unique: str, tmp_path: Path
) -> None:
    ns = f"x{unique}"

    def replica(ctx: ServiceContext) -> ServiceSpec[ExtractorDeps]:
        # A replica with no durable consumers: only the broadcast can reach it.
        spec = build(ctx, extractor=ExtractorSettings(sample_handbook=False))
        return replace(spec, subscriptions=[], rpc=[], on_started=[])

    settings = build_settings(nats_url=nats_url, store=sqlite(tmp_path), llm="offline",
                              limiter="off")  # fmt: skip
    ctx = await start_service("extractor", build=replica, settings=settings, namespace=ns)
    try:
        tasks = deps_of(ctx).tasks
        work = asyncio.create_task(tasks.run("src-1", asyncio.sleep(60)))
        await asyncio.sleep(0)
        assert tasks.running() == ["src-1"]
        await publish_event(
            ctx.broker, SourceCancelled(source_id="src-1", actor="U1"), namespace=ns
        )
        try:
            await asyncio.wait_for(work, 10)
            raise AssertionError("the task was not cancelled")
        except SourceCancelledError as exc:
            assert exc.source_id == "src-1"
    finally:
        await stop_service(ctx)


async def test_delta_decisions_apply_reject_and_stay_decided(
    nats_url: str, unique: str, tmp_path: Path
) -> None:
    ns = f"x{unique}"
    log = await EventLog(ns).start(nats_url)
    delta = KbDelta(
        reason="missing",
        topics=[BusTopic(id="nieuw", label="Nieuw", type="concept")],
        relations=[{"source": "nieuw", "target": "a", "type": "related_to"}],
    )
    try:
        async with running_extractor(
            nats_url=nats_url, namespace=ns, store_url=sqlite(tmp_path), admins=("ADMIN",)
        ) as ctx:
            store: Store = ctx.store
            await store.topics.upsert_many([Topic(id="a", label="A", type="concept")])
            for sid in ("s1", "s2"):
                await store.suggestions.create(
                    Suggestion(id=sid, delta=delta.model_dump(mode="json"), proposed_by="U2")
                )

            async def decide(sid: str, decision: str) -> None:
                event = KbDeltaDecided(
                    suggestion_id=sid,
                    decision=decision,
                    decided_by="ADMIN",
                    delta=delta,
                    actor="gateway",
                )
                await publish_event(ctx.broker, event, namespace=ns)

            await decide("s2", "rejected")
            await decide("s1", "approved")
            updated = await log.wait_for(lambda: log.of("kb.updated"))
            await decide("s1", "rejected")  # a second admin, too late: no effect
            await decide("s2", "approved")  # already rejected: no effect
            await decide("s3", "approved")  # never stored: refused and reported
            letter = await log.wait_for(lambda: log.of("failed.kb.delta.decided"))
            s1, s2, s3 = [await store.suggestions.get(s) for s in ("s1", "s2", "s3")]
            created = await store.topics.get("nieuw")
            relations = await store.relations.list()
    finally:
        await log.close()
    assert s1 is not None and (s1.status, s1.decided_by) == ("approved", "ADMIN")
    assert s2 is not None and s2.status == "rejected"
    assert s3 is None and "no stored suggestion s3" in letter[0].error
    assert created is not None and created.metadata.source == "suggestion"
    assert [(r.source, r.target) for r in relations] == [("nieuw", "a")]
    assert "s1" in updated[0].reason and updated[0].changed_ids == ["a", "nieuw"]
    assert len(log.of("kb.updated")) == 1  # the later decisions changed nothing


async def test_first_start_ingests_the_sample_handbook_once(
    nats_url: str, unique: str, tmp_path: Path
) -> None:
    ns = f"x{unique}"
    files = sorted(sample_handbook_dir().glob("*.md"))
    log = await EventLog(ns).start(nats_url)
    try:
        async with running_extractor(
            nats_url=nats_url,
            namespace=ns,
            sample_handbook=True,
            max_chunk_chars=8000,
            overlap_chars=800,
            store_url=sqlite(tmp_path),
        ) as ctx:
            await log.wait_for(lambda: len(log.of("source.completed")) == len(files), 30)
            ids = await ctx.store.topics.ids()
            stored = await ctx.store.flags.get(SAMPLE_FLAG)
            flag = stored.value if stored is not None else {}
            again = await ingest_sample_handbook_if_first_start(deps_of(ctx))
            sources = await ctx.store.sources.list()
    finally:
        await log.close()
    assert len(files) == 10 and again == 0 and flag["published"] == 10
    assert {"teamlead", "ouderschapsverlof", "rollen", "people-partner"} <= ids
    assert {s.status for s in sources} == {"completed"} and len(sources) == 10
    assert not log.of("source.failed")


async def test_no_sample_handbook_when_sources_exist(
    nats_url: str, unique: str, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    seeded = await open_store(url)
    await seeded.sources.create(Source(id="src-own", name="own.md", sha256="0" * 64))
    await seeded.close()
    async with running_extractor(
        nats_url=nats_url, namespace=f"x{unique}", store_url=url, sample_handbook=True
    ) as ctx:
        stored = await ctx.store.flags.get(SAMPLE_FLAG)
        assert stored is not None and stored.value == {"skipped": "sources existed on first start"}
        assert [s.id for s in await ctx.store.sources.list()] == ["src-own"]


async def test_an_upload_is_registered_from_its_object_and_only_from_it(
    nats_url: str, unique: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="services.extractor.pipeline")
    ns = f"x{unique}"
    log = await EventLog(ns).start(nats_url)
    text = sections(1)
    data = text.encode()
    good, ref = sha256_text(text), f"docs/{unique}.md"
    try:
        async with running_extractor(
            nats_url=nats_url, namespace=ns, store_url=sqlite(tmp_path)
        ) as ctx:
            await put_source_object(ctx.broker.connection, ref, data)
            # A text in the store under text_ref is no upload: the contract names an object.
            await ctx.store.source_texts.put("inline-1", text)
            for source_id, digest, text_ref in (
                ("g-2", "f" * 64, ref), ("g-3", good, "inline-1"), ("g-1", good, ref),
            ):  # fmt: skip
                event = SourceUploaded(
                    source_id=source_id, name="n.md", sha256=digest, text_ref=text_ref,
                    size=len(data), uploaded_by="U1", actor="gateway",
                )  # fmt: skip
                await publish_event(ctx.broker, event, namespace=ns)
            await log.wait_for(lambda: log.of("source.completed", "g-1"))
            bad_sha = await log.wait_for(lambda: log.of("source.failed", "g-2"))
            inline = await log.wait_for(lambda: log.of("source.failed", "g-3"))
            created = await ctx.store.sources.get("g-1")
            assert await ctx.store.sources.get("g-2") is None
            assert await ctx.store.sources.get("g-3") is None
            assert await ctx.store.source_texts.get("g-1") == text
            left = await read_source_object(ctx.broker.connection, ref, max_bytes=10_000)
            # A repeat of g-1's event after the uploader put a new file under that name
            # leaves the new file alone (only g-1's own content is dropped).
            newer = text.replace("Onderwerp", "Thema").encode()
            await put_source_object(ctx.broker.connection, ref, newer)
            again = SourceUploaded(
                source_id="g-1", name="n.md", sha256=good, text_ref=ref, size=len(data),
                uploaded_by="U1", actor="gateway",
            )  # fmt: skip
            await publish_event(ctx.broker, again, namespace=ns)
            await until(lambda: "source g-1 is completed; nothing to do" in caplog.text)
            kept = await read_source_object(ctx.broker.connection, ref, max_bytes=10_000)
    finally:
        await log.close()
    assert created is not None and created.who == "U1" and created.status == "completed"
    assert created.sha256 == good
    assert "does not match the event's size and sha256" in bad_sha[0].error
    assert "no object 'inline-1' in the r42-sources bucket" in inline[0].error
    assert left is None  # read once, then deleted: the store holds the text
    assert kept == newer
