"""subscriptions_settled: a request sent right after it always finds the new responder."""

from __future__ import annotations

import uuid

import nats
from nats.aio.client import Client
from nats.aio.msg import Msg

from shared.bus import subscriptions_settled

# A single nats-py flush misses about one round in ten under this churn; 80 rounds expose it.
ROUNDS = 80


async def _round(url: str, subject: str) -> bool:
    """One fresh responder and requester; True when the request found the responder."""
    responder: Client = await nats.connect(url, allow_reconnect=False)
    requester: Client = await nats.connect(url, allow_reconnect=False)
    try:

        async def answer(msg: Msg) -> None:
            await msg.respond(b"pong")

        await responder.subscribe(subject, queue="r", cb=answer)
        await subscriptions_settled(responder)
        try:
            await requester.request(subject, b"ping", timeout=3)
        except nats.errors.NoRespondersError:
            return False
        return True
    finally:
        # Closing both each round keeps the server busy, which is what opens the window.
        await responder.close()
        await requester.close()


async def test_a_request_right_after_the_barrier_always_finds_its_responder(nats_url: str) -> None:
    prefix = f"barrier.{uuid.uuid4().hex[:8]}"
    missed = [i for i in range(ROUNDS) if not await _round(nats_url, f"{prefix}.{i}")]
    assert missed == []
