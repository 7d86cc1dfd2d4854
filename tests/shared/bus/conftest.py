"""Bus fixtures: a per-test namespace (own streams and subjects) on the session's nats-server."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import nats
import pytest
from faststream.nats import NatsBroker
from nats.js import JetStreamContext

from shared.bus import STREAMS, build_broker, ns_stream, start_broker

WAIT = 15.0
"""Upper bound for waiting on something that should happen (hang protection, not a timing)."""


class BusHarness:
    """One namespaced broker per test plus a raw nats-py connection to poke at the server."""

    def __init__(self, url: str, namespace: str) -> None:
        self.url = url
        self.ns = namespace
        self.broker: NatsBroker = build_broker(url, name=f"test-{namespace}")
        self.nc: Any = None
        self.js: JetStreamContext | None = None
        self._extra_brokers: list[NatsBroker] = []

    async def start(self) -> dict[str, str]:
        """Connect, ensure the namespaced streams, start the subscribers."""
        return await start_broker(self.broker, namespace=self.ns, timeout=WAIT)

    def new_broker(self, name: str) -> NatsBroker:
        """Another broker (a second replica or service) stopped at teardown."""
        broker = build_broker(self.url, name=f"{name}-{self.ns}")
        self._extra_brokers.append(broker)
        return broker

    async def raw(self) -> JetStreamContext:
        """A plain nats-py JetStream context (for malformed publishes and inspection)."""
        if self.js is None:
            self.nc = await nats.connect(self.url)
            self.js = self.nc.jetstream()
        return self.js

    def stream(self, name: str) -> str:
        """The namespaced name of a stream."""
        return ns_stream(name, self.ns)

    async def close(self) -> None:
        for broker in [self.broker, *self._extra_brokers]:
            with contextlib.suppress(Exception):
                await broker.stop()
        js = await self.raw()
        for spec in STREAMS:
            with contextlib.suppress(Exception):
                await js.delete_stream(self.stream(spec.name))
        await self.nc.close()


@pytest.fixture
def ns(unique: str) -> str:
    """This test's bus namespace."""
    return f"t{unique}"


@pytest.fixture
async def bus(nats_url: str, ns: str) -> AsyncIterator[BusHarness]:
    """A namespaced bus harness, torn down (brokers stopped, streams deleted) after the test."""
    harness = BusHarness(nats_url, ns)
    yield harness
    await harness.close()


async def wait_for(queue: asyncio.Queue[Any], *, within: float = WAIT) -> Any:
    """The next item from `queue`, failing the test (not hanging) if none arrives."""
    return await asyncio.wait_for(queue.get(), within)
