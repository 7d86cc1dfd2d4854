"""Broker factory, start-up and publish errors: clear messages, no credentials, bounded waits."""

from __future__ import annotations

import socket

import pytest
from pydantic import BaseModel

from shared.bus import (
    KbUpdated,
    build_broker,
    nack_backoff,
    publish_event,
    reconnect_delay,
    redact_url,
    start_broker,
)
from shared.errors import BadInputError, BusError, ConfigError


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_redact_url_hides_credentials() -> None:
    assert redact_url("nats://alice:s3cret@nats.internal:4222") == "nats://***@nats.internal:4222"
    assert redact_url("nats://tok3n@127.0.0.1:4222") == "nats://***@127.0.0.1:4222"
    assert redact_url("127.0.0.1:4222") == "127.0.0.1:4222"
    assert redact_url("mongodb://u:p@h1:1,h2:2/db") == "mongodb://***@h1:1,h2:2/db"
    assert redact_url("nats://a:b@h1:1,nats://c:d@h2:2") == "nats://***@h1:1,nats://***@h2:2"
    assert redact_url("sqlite:////abs/r42.db") == "sqlite:////abs/r42.db"


def test_reconnect_delay_grows_with_jitter_and_a_cap() -> None:
    assert reconnect_delay(0) == 0.0
    for attempt, ceiling in ((1, 0.5), (2, 1.0), (3, 2.0), (10, 15.0), (50, 15.0)):
        for _ in range(50):
            assert ceiling / 2 <= reconnect_delay(attempt) <= ceiling


def test_nack_backoff_doubles_per_delivery_up_to_the_cap() -> None:
    assert [nack_backoff(n, base=1.0, cap=5.0) for n in (1, 2, 3, 4, 5)] == [1, 2, 4, 5, 5]


def test_build_broker_rejects_bad_settings() -> None:
    with pytest.raises(ConfigError, match="url"):
        build_broker("", name="svc")
    with pytest.raises(ConfigError, match="name"):
        build_broker("nats://127.0.0.1:4222", name=" ")


async def test_start_broker_gives_up_after_its_timeout_without_leaking_credentials() -> None:
    url = f"nats://alice:s3cret@127.0.0.1:{free_port()}"
    broker = build_broker(url, name="unreachable")
    with pytest.raises(BusError, match="could not connect") as caught:
        await start_broker(broker, timeout=1.0)
    assert "s3cret" not in str(caught.value) and "alice" not in str(caught.value)
    assert f"127.0.0.1:{url.rsplit(':', 1)[1]}" in str(caught.value)


async def test_publish_event_errors_are_ours(nats_url: str) -> None:
    broker = build_broker(nats_url, name="publisher")
    event = KbUpdated(actor="x", kb_hash="h", reason="r")
    with pytest.raises(BusError, match="not connected"):
        await publish_event(broker, event)

    class NotAnEvent(BaseModel):
        x: int = 1

    with pytest.raises(BadInputError, match="needs an Event"):
        await publish_event(broker, NotAnEvent())  # type: ignore[arg-type]
    await broker.connect()
    try:
        # No stream exists for this namespace: JetStream has nobody to ack it. The publish is
        # repeated for the election window (short here; tests/services/cli/test_cluster.py
        # kills a stream leader under an ingest), then said to have failed.
        with pytest.raises(BusError, match=r"kb\.updated.*no stream answered for 0\.5 s"):
            await publish_event(
                broker, event, namespace="tnostreams", timeout=1.0, leaderless_for=0.5
            )
    finally:
        await broker.stop()
