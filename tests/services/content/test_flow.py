"""content.requested → content.ready over the real bus (nats-server + SQLite + fake Anthropic)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import nats
import pytest

from services.content import app
from shared.bus import (
    STREAMS,
    ContentReady,
    ContentRequested,
    KbUpdated,
    jetstream,
    ns_stream,
    ns_subject,
    publish_event,
    request,
    stream_for_subject,
)
from shared.bus.content_rpc import REFINE_SUBJECT, RefineReply, RefineRequest
from shared.config import build_settings
from shared.errors import BadInputError
from shared.runtime.service import (
    ServiceContext,
    ServiceSpec,
    Subscription,
    start_service,
    stop_service,
)
from shared.store import Topic, open_store
from tests.fakes.anthropic_server import FakeAnthropic, slow, tool_reply
from tests.fakes.fixtures import FAKE_ANTHROPIC_API_KEY
from tests.services.content.conftest import ARTICLE, SLIDES, TOPICS

TOPIC = "radicale-transparantie"


class ForgedRefine(RefineRequest):
    """A RefineRequest with the admin claim a liar adds on the wire."""

    is_admin: bool = True


class Running:
    """The content service under test plus what it published on content.ready."""

    def __init__(self, ctx: ServiceContext, ready: list[ContentReady], gateway: str) -> None:
        self.ctx = ctx
        self.ready = ready
        self.gateway = gateway  # the durable collecting content.ready

    async def publish(self, event: ContentRequested | KbUpdated) -> None:
        await publish_event(self.ctx.broker, event, namespace=self.ctx.namespace)

    async def publish_raw(self, event: ContentRequested, msg_id: str) -> None:
        """Publish the same event under another Nats-Msg-Id: JetStream stores it again,
        as a redelivery after a crash would hand it to the service again."""
        await jetstream(self.ctx.broker).publish(
            ns_subject(event.subject, self.ctx.namespace),
            event.to_bytes(),
            headers={"Nats-Msg-Id": msg_id},
        )

    async def settled(self, durable: str, subject: str, delivered: int) -> None:
        """Wait until the consumer has delivered `delivered` messages, acked all, holds none."""
        stream = ns_stream(stream_for_subject(subject).name, self.ctx.namespace)
        js = jetstream(self.ctx.broker)
        for _ in range(400):
            info = await js.consumer_info(stream, durable)
            if (info.delivered.consumer_seq >= delivered and info.num_ack_pending == 0
                    and info.num_pending == 0):  # fmt: skip
                return
            await asyncio.sleep(0.05)
        raise AssertionError(f"{durable} did not settle: {info}")

    async def wait_ready(self, count: int) -> list[ContentReady]:
        for _ in range(400):
            if len(self.ready) >= count:
                return self.ready
            await asyncio.sleep(0.05)
        raise AssertionError(f"expected {count} content.ready, got {self.ready}")


@pytest.fixture
async def service(
    nats_url: str, unique: str, tmp_path: Path, fake_anthropic: FakeAnthropic
) -> AsyncIterator[Running]:
    ready: list[ContentReady] = []

    async def on_ready(event: ContentReady) -> None:
        ready.append(event)

    def build(ctx: ServiceContext) -> ServiceSpec[Any]:
        spec = app.build(ctx)
        # The requester's side, on the same connection: who hears content.ready.
        listener = Subscription(ContentReady, f"gw{unique}", on_ready)
        return replace(spec, subscriptions=[*spec.subscriptions, listener])

    settings = build_settings(
        nats_url=nats_url, store=f"sqlite:///{tmp_path / 'flow.db'}", llm="anthropic",
        anthropic_base_url=fake_anthropic.url, anthropic_api_key=FAKE_ANTHROPIC_API_KEY,
        limiter="off", admins=["UADMIN"],
    )  # fmt: skip
    seeding = await open_store(settings.store_url)
    await seeding.topics.upsert_many(TOPICS)
    await seeding.close()
    ctx = await start_service("content", build=build, settings=settings, namespace=f"c{unique}")
    try:
        yield Running(ctx, ready, f"gw{unique}")
    finally:
        await stop_service(ctx)
        await delete_streams(nats_url, ctx.namespace)


async def delete_streams(url: str, namespace: str) -> None:
    """Free the namespace's streams: JetStream reserves their max_bytes on the shared server."""
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        for spec in STREAMS:
            with contextlib.suppress(Exception):
                await js.delete_stream(ns_stream(spec.name, namespace))
    finally:
        await nc.close()


def requested(**fields: object) -> ContentRequested:
    base: dict[str, object] = {
        "actor": "gateway", "user_id": "U1", "topic_id": TOPIC, "content_type": "article",
        "reply_to": {"channel": "C1", "ts": "1.2"},
    }  # fmt: skip
    return ContentRequested.model_validate({**base, **fields})


def requests_for(fake: FakeAnthropic, tool: str) -> Callable[[], int]:
    return lambda: sum(1 for r in fake.requests if r.body["tool_choice"].get("name") == tool)


async def test_request_generates_stores_and_answers(
    service: Running, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.enqueue(tool_reply("emit_learning_article", ARTICLE))
    event = requested()
    await service.publish(event)
    (ready,) = await service.wait_ready(1)
    assert ready.ok and ready.error is None
    assert (ready.topic_id, ready.content_type, ready.content_ref) == (
        TOPIC, "article", f"{TOPIC}/article",
    )  # fmt: skip
    assert ready.reply_to == {"channel": "C1", "ts": "1.2"}
    assert ready.correlation_id == event.correlation_id and ready.actor == "content"
    stored = await service.ctx.store.content.get(TOPIC)
    assert stored is not None and stored.article["title"] == ARTICLE["title"]


async def test_redelivery_generates_once(service: Running, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(tool_reply("emit_learning_slides", SLIDES))
    event = requested(content_type="slides")
    await service.publish(event)
    await service.publish(event)  # same event_id: JetStream stores it once
    await service.publish_raw(event, "redelivered-1")  # and the handler sees it again
    await service.settled(app.REQUESTS_DURABLE, event.subject, delivered=2)
    assert requests_for(fake_anthropic, "emit_learning_slides")() == 1
    await service.wait_ready(1)
    # Both deliveries answered with the same event id, which the stream stored once.
    await service.settled(service.gateway, ContentReady.SUBJECT, delivered=1)
    assert len(service.ready) == 1 and service.ready[0].ok


async def test_forced_redelivery_is_deduped_by_event_id_but_a_new_force_regenerates(
    service: Running, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.enqueue(*[tool_reply("emit_learning_article", ARTICLE)] * 2)
    count = requests_for(fake_anthropic, "emit_learning_article")
    forced = requested(force=True)
    await service.publish(forced)
    await service.publish_raw(forced, "again")
    await service.settled(app.REQUESTS_DURABLE, forced.subject, delivered=2)
    assert count() == 1
    await service.publish(requested(force=True))
    await service.settled(app.REQUESTS_DURABLE, forced.subject, delivered=3)
    assert count() == 2
    await service.publish(requested())  # not forced: cached
    await service.settled(app.REQUESTS_DURABLE, forced.subject, delivered=4)
    assert count() == 2 and fake_anthropic.pending == 0


async def test_invalid_model_output_answers_with_an_error(
    service: Running, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.enqueue(
        tool_reply("emit_learning_slides", {**SLIDES, "slides": SLIDES["slides"][:2]})
    )
    await service.publish(requested(content_type="slides"))
    (ready,) = await service.wait_ready(1)
    assert not ready.ok and ready.content_ref is None
    assert ready.error and "broke the content rules" in ready.error
    assert await service.ctx.store.content.get(TOPIC) is None


async def test_free_text_becomes_a_custom_topic(
    service: Running, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.enqueue(
        tool_reply("emit_custom_topic", {"label": "Pair programming",
                                         "description": "Samen aan één toetsenbord."}),
        tool_reply("emit_learning_article", ARTICLE),
    )  # fmt: skip
    await service.publish(requested(topic_id="Ik wil leren over pair programming"))
    (ready,) = await service.wait_ready(1)
    assert ready.ok and ready.content_ref == "pair-programming/article"
    assert ready.topic_id == "pair-programming"
    assert await service.ctx.store.content.get("pair-programming") is not None


async def test_kb_updated_over_the_bus_marks_content_stale(
    service: Running, fake_anthropic: FakeAnthropic
) -> None:
    fake_anthropic.enqueue(tool_reply("emit_learning_article", ARTICLE))
    await service.publish(requested())
    await service.wait_ready(1)
    store = service.ctx.store
    await store.topics.upsert_many(
        [Topic(id=TOPIC, label="Open boek", type="concept", description="Alles open.")]
    )
    update = KbUpdated(actor="extractor", kb_hash="abcd1234", changed_ids=[TOPIC], reason="test")
    await service.publish(update)
    await service.settled(app.KB_DURABLE, update.subject, delivered=1)
    assert await store.content.list_stale() == [TOPIC]


async def test_refine_rpc_for_admins_only(service: Running, fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.enqueue(tool_reply("emit_learning_article", ARTICLE))
    await service.publish(requested())
    await service.wait_ready(1)
    broker, ns = service.ctx.broker, service.ctx.namespace
    # Admin status comes from R42_ADMINS (UADMIN); a request claiming it is refused outright.
    ask = RefineRequest(topic=TOPIC, instruction="Korter", user_id="U9")
    with pytest.raises(BadInputError, match="only admins"):
        await request(broker, REFINE_SUBJECT, ask, response_model=RefineReply, namespace=ns)
    liar = ForgedRefine(topic=TOPIC, instruction="Korter", user_id="U9")
    with pytest.raises(BadInputError, match=r"is_admin.*[Ee]xtra inputs"):
        await request(broker, REFINE_SUBJECT, liar, response_model=RefineReply, namespace=ns)
    fake_anthropic.enqueue(tool_reply("set_intro", {"intro": "Korter."}))
    reply = await request(
        broker, REFINE_SUBJECT, ask.model_copy(update={"user_id": "UADMIN"}),
        response_model=RefineReply, namespace=ns, timeout=15,
    )  # fmt: skip
    assert reply.applied == ["set_intro"] and reply.article["intro"] == "Korter."
    missing = RefineRequest(topic="verlof", instruction="Korter", user_id="UADMIN")
    with pytest.raises(BadInputError, match="no article to refine yet"):
        await request(broker, REFINE_SUBJECT, missing, response_model=RefineReply, namespace=ns)


async def test_concurrent_requests_for_one_topic_generate_once(
    service: Running, fake_anthropic: FakeAnthropic
) -> None:
    # A slow model: the second request arrives while the first still generates.
    fake_anthropic.enqueue(slow(tool_reply("emit_learning_article", ARTICLE), 1.0))
    first, second = requested(user_id="U1"), requested(user_id="U2")
    await service.publish(first)
    await service.publish(second)
    ready = await service.wait_ready(2)
    assert all(r.ok and r.content_ref == f"{TOPIC}/article" for r in ready)
    assert {r.correlation_id for r in ready} == {first.correlation_id, second.correlation_id}
    assert requests_for(fake_anthropic, "emit_learning_article")() == 1
