"""subscribe_event against a real JetStream: ack, nack with delay, term + failure events."""

from __future__ import annotations

import asyncio
import json
import logging
import time

import pytest

from shared.bus import (
    DeadLetter,
    KbUpdated,
    SourceFailed,
    SourceUploaded,
    current_delivery,
    ns_subject,
    publish_event,
    start_broker,
    subscribe_event,
)
from shared.errors import ConfigError, PermanentError, TransientError
from tests.shared.bus.conftest import WAIT, BusHarness, wait_for


def uploaded(source_id: str = "src-1") -> SourceUploaded:
    return SourceUploaded(
        actor="gateway", source_id=source_id, name="handbook.md", sha256="a" * 64,
        text_ref=f"source_texts/{source_id}", size=1234, uploaded_by="U123",
    )  # fmt: skip


def kb_updated(reason: str = "merge") -> KbUpdated:
    return KbUpdated(actor="extractor", kb_hash="h1", changed_ids=["t1"], reason=reason)


async def consumer_state(bus: BusHarness, stream: str, durable: str) -> tuple[int, int, int]:
    """(undelivered, awaiting ack, ack floor) of a durable, once nothing is outstanding.

    Acks are sent after the handler returns, so a test that saw the handler run may query
    the server a moment before the ack lands; polling (bounded by WAIT) makes that harmless.
    The ack floor (last stream sequence with everything up to it acked or termed) proves
    a message was finished, not merely waiting for a delayed redelivery.
    """
    js = await bus.raw()
    state = (-1, -1, -1)
    for _ in range(int(WAIT / 0.02)):
        info = await js.consumer_info(bus.stream(stream), durable)
        state = (info.num_pending or 0, info.num_ack_pending or 0, info.ack_floor.stream_seq)
        if state[:2] == (0, 0):
            break
        await asyncio.sleep(0.02)
    return state


async def test_round_trip_delivers_typed_event_and_acks(bus: BusHarness) -> None:
    got: asyncio.Queue[tuple[SourceUploaded, int]] = asyncio.Queue()

    async def handle(event: SourceUploaded) -> None:
        delivery = current_delivery()
        assert delivery is not None
        await got.put((event, delivery.num_delivered))

    subscribe_event(
        bus.broker, SourceUploaded, durable="extractor", handler=handle, namespace=bus.ns
    )
    await bus.start()
    sent = uploaded()
    ack = await publish_event(bus.broker, sent, namespace=bus.ns)
    assert ack.stream == bus.stream("SOURCES") and not ack.duplicate

    event, delivered = await wait_for(got)
    assert isinstance(event, SourceUploaded)
    assert event == sent
    assert delivered == 1
    # The ack reached the server: nothing pending, nothing awaiting ack.
    assert await consumer_state(bus, "SOURCES", "extractor") == (0, 0, 1)


async def test_transient_error_is_redelivered_after_nack_delay(bus: BusHarness) -> None:
    nack_delay = 0.5
    seen: list[tuple[int, float]] = []
    done: asyncio.Queue[None] = asyncio.Queue()

    async def handle(event: KbUpdated) -> None:
        delivery = current_delivery()
        assert delivery is not None
        seen.append((delivery.num_delivered, time.monotonic()))
        if len(seen) == 1:
            raise TransientError("store busy")
        await done.put(None)

    subscribe_event(
        bus.broker, KbUpdated, durable="content", handler=handle, namespace=bus.ns,
        nack_delay=nack_delay,
    )  # fmt: skip
    await bus.start()
    await publish_event(bus.broker, kb_updated(), namespace=bus.ns)
    await wait_for(done)

    assert [n for n, _ in seen] == [1, 2]
    # Lower bound only: the server redelivers no earlier than the nack delay.
    assert seen[1][1] - seen[0][1] >= nack_delay * 0.95


async def test_duplicate_event_id_inside_window_is_delivered_once(bus: BusHarness) -> None:
    got: asyncio.Queue[KbUpdated] = asyncio.Queue()

    async def handle(event: KbUpdated) -> None:
        await got.put(event)

    subscribe_event(bus.broker, KbUpdated, durable="quiz", handler=handle, namespace=bus.ns)
    await bus.start()
    first = kb_updated("first")
    ack1 = await publish_event(bus.broker, first, namespace=bus.ns)
    ack2 = await publish_event(bus.broker, first, namespace=bus.ns)
    sentinel = kb_updated("sentinel")
    await publish_event(bus.broker, sentinel, namespace=bus.ns)

    assert not ack1.duplicate and ack2.duplicate and ack2.seq == ack1.seq
    # In-order single consumer: once the sentinel arrives, a duplicate would already have.
    assert (await wait_for(got)).reason == "first"
    assert (await wait_for(got)).reason == "sentinel"
    assert got.empty()


async def test_permanent_error_terms_and_publishes_dead_letter(bus: BusHarness) -> None:
    calls: list[str] = []
    handled: asyncio.Queue[str] = asyncio.Queue()
    dead: asyncio.Queue[DeadLetter] = asyncio.Queue()

    async def handle(event: KbUpdated) -> None:
        calls.append(event.reason)
        if event.reason == "poison":
            raise PermanentError("topic t1 cannot be merged")
        await handled.put(event.reason)

    async def on_dead(letter: DeadLetter) -> None:
        await dead.put(letter)

    subscribe_event(
        bus.broker, KbUpdated, durable="r42", handler=handle, namespace=bus.ns, nack_delay=0.05
    )
    subscribe_event(bus.broker, DeadLetter, durable="ops", handler=on_dead, namespace=bus.ns)
    await bus.start()
    poison = kb_updated("poison")
    await publish_event(bus.broker, poison, namespace=bus.ns)
    await publish_event(bus.broker, kb_updated("next"), namespace=bus.ns)

    letter = await wait_for(dead)
    assert letter.subject == "failed.kb.updated"
    assert letter.original_subject == "kb.updated"
    assert letter.original_event_id == poison.event_id
    assert letter.correlation_id == poison.correlation_id
    assert "topic t1 cannot be merged" in letter.error and "PermanentError" in letter.error
    assert letter.deliveries == 1 and letter.consumer == "r42"
    assert letter.stream == bus.stream("KB") and letter.stream_seq == 1
    assert await wait_for(handled) == "next"
    assert calls == ["poison", "next"]
    assert await consumer_state(bus, "KB", "r42") == (0, 0, 2)


async def test_permanent_error_publishes_the_services_own_failure_event(bus: BusHarness) -> None:
    failed: asyncio.Queue[SourceFailed] = asyncio.Queue()

    async def handle(event: SourceUploaded) -> None:
        raise ValueError("chunker crashed on a table")  # a bug counts as permanent

    async def on_failed(event: SourceFailed) -> None:
        await failed.put(event)

    def source_failed(event: SourceUploaded, error: str) -> SourceFailed:
        return SourceFailed.caused_by(event, actor="extractor", source_id=event.source_id,
                                      error=error)  # fmt: skip

    subscribe_event(
        bus.broker,
        SourceUploaded,
        durable="extractor",
        handler=handle,
        namespace=bus.ns,
        on_failure=source_failed,
    )
    subscribe_event(
        bus.broker, SourceFailed, durable="gateway", handler=on_failed, namespace=bus.ns
    )
    await bus.start()
    sent = uploaded("src-42")
    await publish_event(bus.broker, sent, namespace=bus.ns)

    event = await wait_for(failed)
    assert event.source_id == "src-42"
    assert "chunker crashed on a table" in event.error
    assert event.correlation_id == sent.correlation_id
    assert event.actor == "extractor"


async def test_malformed_payloads_are_termed_logged_and_consumer_continues(
    bus: BusHarness, caplog: pytest.LogCaptureFixture
) -> None:
    got: asyncio.Queue[SourceUploaded] = asyncio.Queue()

    async def handle(event: SourceUploaded) -> None:
        await got.put(event)

    subscribe_event(
        bus.broker, SourceUploaded, durable="extractor", handler=handle, namespace=bus.ns
    )
    await bus.start()
    js = await bus.raw()
    subject = ns_subject("source.uploaded", bus.ns)
    good = uploaded("src-ok")
    wrong_schema = good.model_dump(mode="json") | {
        "size": -1,
        "event_id": "2b9f0c1e-1a52-4a53-9d36-6e0f2a1b7c10",
    }
    wrong_version = good.model_dump(mode="json") | {
        "schema_version": 99,
        "event_id": "5d3b7a7e-8f0b-4c0e-b0a4-94b0f3c1d2e3",
    }
    caplog.set_level(logging.WARNING, logger="shared.bus.consumer")
    await js.publish(subject, b"\x00not json{", headers={"Nats-Msg-Id": "bad-json-1"})
    await js.publish(subject, json.dumps(wrong_schema).encode())
    await js.publish(subject, json.dumps(wrong_version).encode())
    await publish_event(bus.broker, good, namespace=bus.ns)

    assert (await wait_for(got)).source_id == "src-ok"
    assert got.empty()
    warnings = [r.getMessage() for r in caplog.records if r.name == "shared.bus.consumer"]
    assert len(warnings) == 3
    assert all(subject in w for w in warnings)
    assert "bad-json-1" in warnings[0] and "not JSON" in warnings[0]
    assert wrong_schema["event_id"] in warnings[1] and "size" in warnings[1]
    assert wrong_version["event_id"] in warnings[2] and "schema_version 99" in warnings[2]
    assert await consumer_state(bus, "SOURCES", "extractor") == (0, 0, 4)


async def test_rejected_payloads_yield_dead_letters_with_reason_and_id(bus: BusHarness) -> None:
    """No silent drops: a missing schema_version or a non-UUID event_id is reported on failed.*."""
    dead: asyncio.Queue[DeadLetter] = asyncio.Queue()

    async def handle(event: SourceUploaded) -> None:
        raise AssertionError(f"a malformed event reached the handler: {event}")

    async def on_dead(letter: DeadLetter) -> None:
        await dead.put(letter)

    subscribe_event(
        bus.broker, SourceUploaded, durable="extractor", handler=handle, namespace=bus.ns
    )
    subscribe_event(bus.broker, DeadLetter, durable="ops", handler=on_dead, namespace=bus.ns)
    await bus.start()
    js = await bus.raw()
    subject = ns_subject("source.uploaded", bus.ns)
    no_version = uploaded("src-a").model_dump(mode="json")
    del no_version["schema_version"]
    bad_id = uploaded("src-b").model_dump(mode="json") | {"event_id": "not-a-uuid"}
    await js.publish(subject, json.dumps(no_version).encode())
    await js.publish(subject, json.dumps(bad_id).encode(), headers={"Nats-Msg-Id": "not-a-uuid"})

    letters = [await wait_for(dead), await wait_for(dead)]
    by_id = {letter.original_event_id: letter for letter in letters}
    assert set(by_id) == {no_version["event_id"], "not-a-uuid"}
    assert "schema_version" in by_id[no_version["event_id"]].error
    assert "UUID" in by_id["not-a-uuid"].error
    for letter in letters:
        assert letter.subject == "failed.source.uploaded" and letter.consumer == "extractor"
    assert await consumer_state(bus, "SOURCES", "extractor") == (0, 0, 2)


async def test_transient_errors_stop_at_max_deliver_with_dead_letter(bus: BusHarness) -> None:
    deliveries: list[int] = []
    dead: asyncio.Queue[DeadLetter] = asyncio.Queue()

    async def handle(event: KbUpdated) -> None:
        delivery = current_delivery()
        assert delivery is not None
        deliveries.append(delivery.num_delivered)
        raise TransientError("model overloaded")

    async def on_dead(letter: DeadLetter) -> None:
        await dead.put(letter)

    subscribe_event(
        bus.broker, KbUpdated, durable="content", handler=handle, namespace=bus.ns,
        max_deliver=3, nack_delay=0.05,
    )  # fmt: skip
    subscribe_event(bus.broker, DeadLetter, durable="ops", handler=on_dead, namespace=bus.ns)
    await bus.start()
    await publish_event(bus.broker, kb_updated(), namespace=bus.ns)

    letter = await wait_for(dead)
    assert letter.deliveries == 3 and "model overloaded" in letter.error
    assert deliveries == [1, 2, 3]
    assert await consumer_state(bus, "KB", "content") == (0, 0, 1)


async def test_replicas_sharing_a_durable_split_the_work(bus: BusHarness) -> None:
    seen: dict[str, list[str]] = {"a": [], "b": []}
    done: asyncio.Queue[None] = asyncio.Queue()

    def handler_for(name: str):
        async def handle(event: KbUpdated) -> None:
            seen[name].append(event.reason)
            await asyncio.sleep(0.01)  # hold the message so the other replica gets some
            await done.put(None)

        return handle

    second = bus.new_broker("replica-b")
    for broker, name, workers in ((bus.broker, "a", 1), (second, "b", 3)):
        subscribe_event(
            broker, KbUpdated, durable="quiz", handler=handler_for(name), namespace=bus.ns,
            max_workers=workers,
        )  # fmt: skip
    await bus.start()
    await second.start()
    for i in range(20):
        await publish_event(bus.broker, kb_updated(f"r{i}"), namespace=bus.ns)
    for _ in range(20):
        await wait_for(done)

    # Each message went to exactly one replica.
    assert sorted(seen["a"] + seen["b"]) == sorted(f"r{i}" for i in range(20))


async def test_changed_consumer_settings_apply_to_an_existing_durable(bus: BusHarness) -> None:
    async def handle(event: KbUpdated) -> None:
        return None

    subscribe_event(
        bus.broker, KbUpdated, durable="r42", handler=handle, namespace=bus.ns, max_deliver=5
    )
    await bus.start()
    js = await bus.raw()
    assert (await js.consumer_info(bus.stream("KB"), "r42")).config.max_deliver == 5
    await bus.broker.stop()

    redeployed = bus.new_broker("redeployed")
    subscribe_event(
        redeployed, KbUpdated, durable="r42", handler=handle, namespace=bus.ns,
        max_deliver=2, ack_wait=12.0,
    )  # fmt: skip
    await start_broker(redeployed, namespace=bus.ns)
    info = await js.consumer_info(bus.stream("KB"), "r42")
    assert info.config.max_deliver == 2 and info.config.ack_wait == 12.0
    assert info.config.filter_subject == ns_subject("kb.updated", bus.ns)


def test_subscribe_event_rejects_bad_registrations(bus: BusHarness) -> None:
    async def handle(event: KbUpdated) -> None:
        return None

    def sync_handle(event: KbUpdated) -> None:
        return None

    class Unregistered(KbUpdated):
        SUBJECT = "kb.other"

    cases = [
        ({"event_cls": KbUpdated, "durable": "has.dot", "handler": handle}, "durable name"),
        ({"event_cls": KbUpdated, "durable": "ok", "handler": sync_handle}, "async function"),
        ({"event_cls": Unregistered, "durable": "ok", "handler": handle}, "not a registered"),
        ({"event_cls": KbUpdated, "durable": "ok", "handler": handle, "max_deliver": 0}, "max_"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ConfigError, match=message):
            subscribe_event(bus.broker, **kwargs)  # type: ignore[arg-type]
