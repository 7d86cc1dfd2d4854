"""Consumer lag gauges (read from JetStream at scrape time) and FastStream's per-subject counts."""

from __future__ import annotations

import asyncio
import re

from shared.bus import SourceProgress, current_delivery
from shared.bus.streams import stream_for_subject
from shared.bus.subjects import ns_stream, ns_subject
from shared.errors import TransientError
from shared.runtime.service import ServiceContext, ServiceSpec, Subscription
from tests.deploy.conftest import DEPLOY, load_docs
from tests.fakes.anthropic_server import FakeAnthropic
from tests.shared.obs.scrape import Samples, hosted, scrape, value

DURABLE = "obslag"
PROCESSED = "faststream_received_processed_messages_total"
PUBLISHED = "faststream_published_messages_total"


def _lag(samples: Samples) -> tuple[float, float, float]:
    """(pending, ack pending, redelivered) of the test's consumer."""
    return (
        value(samples, "r42_consumer_pending_messages", consumer=DURABLE),
        value(samples, "r42_consumer_ack_pending_messages", consumer=DURABLE),
        value(samples, "r42_consumer_redelivered_messages", consumer=DURABLE),
    )


def _progress(source_id: str) -> SourceProgress:
    return SourceProgress(source_id=source_id, chunks_done=1, chunks_total=2, actor="t")


async def test_lag_gauges_follow_a_delivery_until_it_is_acked(
    hosted_env: FakeAnthropic, unique: str
) -> None:
    ns = f"n{unique}"
    subject = ns_subject(SourceProgress.SUBJECT, ns)
    entered: asyncio.Queue[tuple[str, int]] = asyncio.Queue()
    go: asyncio.Queue[None] = asyncio.Queue()

    async def handle(event: SourceProgress) -> None:
        delivery = current_delivery()
        assert delivery is not None
        if event.source_id == "held":  # in flight until the test lets it go; fails once
            entered.put_nowait((event.source_id, delivery.num_delivered))
            await go.get()
            if delivery.num_delivered == 1:
                raise TransientError("not yet")
        elif event.source_id == "broken":
            raise ValueError("never handled")

    def build(ctx: ServiceContext) -> ServiceSpec[None]:
        del ctx
        return ServiceSpec(deps=None, subscriptions=[
            Subscription(SourceProgress, DURABLE, handle, nack_delay=0.05),
        ])  # fmt: skip

    async with hosted("obs", build, namespace=ns) as ctx:
        try:
            await ctx.publish(_progress("held"))
            assert await asyncio.wait_for(entered.get(), 5) == ("held", 1)
            samples = await scrape(ctx)
            assert _lag(samples) == (0, 1, 0)
            stream = ns_stream(stream_for_subject(SourceProgress.SUBJECT).name, ns)
            labels = {s.labels["stream"] for s in samples["r42_consumer_ack_pending_messages"]}
            assert labels == {stream}

            go.put_nowait(None)  # nacked: delivered again after nack_delay
            assert await asyncio.wait_for(entered.get(), 5) == ("held", 2)
            await ctx.publish(_progress("next"))  # waits: the consumer takes one at a time
            assert _lag(await scrape(ctx)) == (1, 1, 1)

            go.put_nowait(None)
            await ctx.publish(_progress("broken"))  # termed and dead-lettered
            for _ in range(100):  # acks and terms go out without waiting for the server
                samples = await scrape(ctx)
                if _lag(samples) == (0, 0, 0) and value(samples, PROCESSED, handler=subject) == 4:
                    break
                await asyncio.sleep(0.02)
        finally:  # a failed check must not leave the handler waiting through shutdown
            go.put_nowait(None)
            go.put_nowait(None)
    assert _lag(samples) == (0, 0, 0)

    # FastStream's middleware: messages, latency and errors per subject.
    assert value(samples, "faststream_received_messages_total", handler=subject) == 4
    assert value(samples, PROCESSED, handler=subject, status="acked") == 2
    assert value(samples, PROCESSED, handler=subject, status="nacked") == 1
    assert value(samples, PROCESSED, handler=subject, status="rejected") == 1
    durations = "faststream_received_processed_messages_duration_seconds_count"
    assert value(samples, durations, handler=subject) == 4
    published = {s.labels["destination"]: s.value for s in samples[PUBLISHED]
                 if s.labels["status"] == "success"}  # fmt: skip
    # What the R42FailedEvents alert selects: the dead letter, nothing else published here.
    failing = {d for d in published if _failed_events_selector().fullmatch(d)}
    assert failing == {ns_subject("failed.source.progress", ns)}
    assert published[ns_subject("failed.source.progress", ns)] == 1
    assert published[subject] == 3  # the test's own publishes, through the service's broker
    published_s = "faststream_published_messages_duration_seconds_count"
    assert value(samples, published_s, destination=subject) == 3


def _failed_events_selector() -> re.Pattern[str]:
    """The destination regex of the R42FailedEvents alert (PromQL string escapes undone)."""
    (doc,) = load_docs(DEPLOY / "prometheus" / "r42-alerts.yaml")
    rule = next(r for g in doc["groups"] for r in g["rules"] if r["alert"] == "R42FailedEvents")
    (quoted,) = re.findall(r'destination=~"((?:[^"\\]|\\.)*)"', rule["expr"])
    return re.compile(quoted.replace("\\\\", "\\"))
