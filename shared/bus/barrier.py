"""A flush that proves the server registered every subscription sent before it."""

from __future__ import annotations

from nats.aio.client import Client

DEFAULT_TIMEOUT_S = 10


async def subscriptions_settled(nc: Client, *, flush_timeout: int = DEFAULT_TIMEOUT_S) -> None:
    """Return once the server has processed every SUB this connection sent so far."""
    # nats-py writes a flush's PING straight to the socket while earlier commands (a fresh
    # SUB) still wait in its pending buffer for the flusher task, so one PONG can come back
    # before the server saw the SUB: a request sent at once then meets "no responders" and
    # an event published at once is missed. While the first flush waits, the flusher writes
    # the pending buffer, so the second PING follows the SUB on the wire and its PONG is the
    # barrier.
    await nc.flush(timeout=flush_timeout)
    await nc.flush(timeout=flush_timeout)
