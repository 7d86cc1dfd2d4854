"""Streamed rpc replies: chunks in order, coalesced and bounded, then the whole typed reply."""

from __future__ import annotations

import asyncio
import time

import pytest
from pydantic import BaseModel

from shared.bus import MAX_CHUNKS, chunk_sink, request, request_stream, serve_rpc
from shared.bus.rpc_chunks import CHUNK_INTERVAL_S
from shared.errors import BusError, TransientError
from tests.shared.bus.conftest import BusHarness


class Ask(BaseModel):
    words: int
    pause: float = 0.0
    fail: bool = False


class Said(BaseModel):
    text: str
    streamed: bool


async def speaker(req: Ask) -> Said:
    """Says `words` words, each to the chunk sink (when the caller asked for chunks)."""
    sink = chunk_sink()
    text = ""
    for i in range(req.words):
        word = f"w{i} "
        text += word
        if sink is not None:
            await sink(word)
        if req.pause:
            await asyncio.sleep(req.pause)
    if req.fail:
        raise TransientError("model overloaded")
    return Said(text=text, streamed=sink is not None)


class Collect:
    def __init__(self) -> None:
        self.items: list[tuple[float, str]] = []

    async def __call__(self, text: str) -> None:
        self.items.append((time.monotonic(), text))

    @property
    def text(self) -> str:
        return "".join(t for _, t in self.items)


async def _serve(bus: BusHarness) -> None:
    await bus.start()
    await serve_rpc(bus.broker, "rpc.say", request_model=Ask, handler=speaker, namespace=bus.ns)


async def test_chunks_arrive_in_order_before_the_reply(bus: BusHarness) -> None:
    await _serve(bus)
    got = Collect()
    started = time.monotonic()
    reply = await request_stream(
        bus.broker, "rpc.say", Ask(words=6, pause=0.15), response_model=Said, on_chunk=got,
        timeout=10, namespace=bus.ns,
    )  # fmt: skip
    done = time.monotonic()
    assert reply.streamed and got.text == reply.text
    assert got.items[0][0] - started < 0.1  # the first word leaves at once
    assert got.items[0][0] < done - 0.5
    assert len(got.items) == 6  # 0.15 s apart: each word is its own chunk


async def test_fast_text_is_coalesced_and_the_chunk_count_bounded(bus: BusHarness) -> None:
    await _serve(bus)
    got = Collect()
    words = MAX_CHUNKS * 3
    reply = await request_stream(
        bus.broker, "rpc.say", Ask(words=words, pause=CHUNK_INTERVAL_S / 20),
        response_model=Said, on_chunk=got, timeout=30, namespace=bus.ns,
    )  # fmt: skip
    assert reply.text.count("w") == words
    assert 2 <= len(got.items) <= MAX_CHUNKS
    assert reply.text.startswith(got.text)  # whatever was streamed is the reply's beginning


async def test_a_plain_request_gets_no_sink(bus: BusHarness) -> None:
    await _serve(bus)
    reply = await request(
        bus.broker, "rpc.say", Ask(words=2), response_model=Said, namespace=bus.ns
    )
    assert reply == Said(text="w0 w1 ", streamed=False)


async def test_an_error_after_chunks_is_our_error_class(bus: BusHarness) -> None:
    await _serve(bus)
    got = Collect()
    with pytest.raises(TransientError, match="overloaded"):
        await request_stream(
            bus.broker, "rpc.say", Ask(words=2, fail=True), response_model=Said, on_chunk=got,
            namespace=bus.ns,
        )  # fmt: skip
    assert got.text == "w0 w1 "


async def test_no_responder_and_timeout_are_bus_errors(bus: BusHarness) -> None:
    await bus.start()
    with pytest.raises(BusError, match="no service is answering"):
        await request_stream(
            bus.broker, "rpc.nobody", Ask(words=1), response_model=Said, on_chunk=Collect(),
            namespace=bus.ns,
        )  # fmt: skip
    await serve_rpc(bus.broker, "rpc.say", request_model=Ask, handler=speaker, namespace=bus.ns)
    with pytest.raises(BusError, match=r"did not answer within 0\.3 s"):
        await request_stream(
            bus.broker, "rpc.say", Ask(words=5, pause=0.2), response_model=Said,
            on_chunk=Collect(), timeout=0.3, namespace=bus.ns,
        )  # fmt: skip
