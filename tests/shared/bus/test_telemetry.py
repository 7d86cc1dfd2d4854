"""BusTelemetrySink: publishes llm.call.logged in the background; never raises or blocks."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest

from shared.bus import BusTelemetrySink, LLMCallLogged, ns_subject, parse_event
from shared.llm.telemetry import LLMCallRecord, TelemetrySink
from tests.shared.bus.conftest import WAIT, BusHarness


def record(i: int, *, ok: bool = True) -> LLMCallRecord:
    return LLMCallRecord(
        task=f"task-{i}", model="claude-haiku-4-5", tier="fast", duration_ms=10.0 + i, ok=ok,
        input_tokens=100 * i, output_tokens=10 * i, error_msg=None if ok else "overloaded",
    )  # fmt: skip


def sink_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "shared.bus.telemetry" and r.levelno == logging.WARNING
    ]


async def test_sink_publishes_llm_call_logged(bus: BusHarness) -> None:
    await bus.start()
    sink = BusTelemetrySink(bus.broker, actor="extractor", namespace=bus.ns)
    assert isinstance(sink, TelemetrySink)
    sent = [record(1), record(2, ok=False), record(3)]
    for r in sent:
        assert sink.emit(r) is None  # returns at once; the publish happens in the background
    await sink.aclose()
    assert sink.published == 3 and sink.dropped == 0

    js = await bus.raw()
    sub = await js.pull_subscribe(ns_subject("llm.call.logged", bus.ns), stream=bus.stream("LLM"))
    msgs = []
    while len(msgs) < 3:  # a fetch may return part of a batch
        msgs += await sub.fetch(3 - len(msgs), timeout=WAIT)
    events = [parse_event(m.subject, m.data, namespace=bus.ns) for m in msgs]
    assert all(isinstance(e, LLMCallLogged) and e.actor == "extractor" for e in events)
    assert [e.record for e in events] == sent  # type: ignore[attr-defined]
    assert all(
        m.headers and m.headers["Nats-Msg-Id"] == e.event_id
        for m, e in zip(msgs, events, strict=True)
    )


async def test_sink_never_raises_when_the_bus_is_down(
    bus: BusHarness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="shared.bus.telemetry")
    sink = BusTelemetrySink(bus.broker, actor="r42", namespace=bus.ns)  # never connected
    for i in range(5):
        sink.emit(record(i))
    assert await sink.flush(timeout=WAIT)
    assert sink.dropped == 5 and sink.published == 0
    assert len(sink_warnings(caplog)) == 1  # one warning per outage, not one per record

    # Connected, then the broker goes away: still quiet, still no exception.
    await bus.start()
    sink.emit(record(10))
    assert await sink.flush(timeout=WAIT)
    assert sink.published == 1
    await bus.broker.stop()
    caplog.clear()
    for i in range(5):
        sink.emit(record(i))
    await sink.aclose(timeout=WAIT)
    assert sink.dropped == 10 and len(sink_warnings(caplog)) == 1
    sink.emit(record(99))  # after close: dropped, no exception
    assert sink.dropped == 11


async def test_full_queue_drops_instead_of_blocking(bus: BusHarness) -> None:
    await bus.start()
    sink = BusTelemetrySink(bus.broker, actor="quiz", namespace=bus.ns, max_queue=2)
    for i in range(50):  # no await in between: the background task cannot drain yet
        sink.emit(record(i))
    assert sink.dropped == 48
    await sink.aclose(timeout=WAIT)
    assert sink.published == 2


async def test_emit_from_another_thread_is_handed_to_the_loop(bus: BusHarness) -> None:
    await bus.start()
    sink = BusTelemetrySink(bus.broker, actor="content", namespace=bus.ns)
    sink.emit(record(0))  # binds the sink to this loop
    thread = threading.Thread(target=sink.emit, args=(record(1),))
    thread.start()
    await asyncio.to_thread(thread.join)
    await asyncio.sleep(0)  # let call_soon_threadsafe run
    await sink.aclose(timeout=WAIT)
    assert sink.published == 2 and sink.dropped == 0


def test_emit_without_an_event_loop_drops_quietly(bus: BusHarness) -> None:
    sink = BusTelemetrySink(bus.broker, actor="cli")
    sink.emit(record(0))
    assert sink.dropped == 1
