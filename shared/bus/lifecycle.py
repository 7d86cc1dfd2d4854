"""Start-up order for a service's broker: connect → streams → durable consumers → subscribers."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Sequence

from faststream.nats import NatsBroker
from nats.errors import Error as NatsError
from nats.js.errors import BadRequestError

from shared.bus.broker import jetstream
from shared.bus.consumer import declared_consumers
from shared.bus.streams import STREAMS, StreamAction, StreamSpec, ensure_streams
from shared.config import redact_url
from shared.errors import BusError, ConfigError

log = logging.getLogger(__name__)


async def ensure_consumers(broker: NatsBroker) -> list[str]:
    """Create or update every durable consumer subscribe_event declared on `broker`."""
    js = jetstream(broker)
    done: list[str] = []
    for stream, config in declared_consumers(broker):
        # A copy: nats-py may fill fields in, and the subscriber holds the original.
        wanted = dataclasses.replace(config)
        try:
            await js.add_consumer(stream, wanted)
        except BadRequestError as exc:
            raise ConfigError(
                f"consumer {config.durable_name} on {stream} cannot take the new settings "
                f"({exc.description}); delete the consumer to recreate it"
            ) from exc
        except (NatsError, TimeoutError, OSError) as exc:
            raise BusError(f"could not set up consumer {config.durable_name}: {exc}") from exc
        done.append(f"{stream}/{config.durable_name}")
    return done


async def start_broker(
    broker: NatsBroker,
    *,
    timeout: float = 30.0,  # noqa: ASYNC109 - bounds the initial connect only
    namespace: str = "",
    replicas: int = 1,
    streams: Sequence[StreamSpec] | None = STREAMS,
) -> dict[str, StreamAction]:
    """Connect (bounded by `timeout`), ensure streams and consumers, start the subscribers."""
    kwargs = getattr(broker, "_connection_kwargs", None) or {}
    servers = ", ".join(redact_url(s) for s in kwargs.get("servers", [])) or "?"
    try:
        await asyncio.wait_for(broker.connect(), timeout)
    except TimeoutError:
        raise BusError(f"could not connect to NATS at {servers} within {timeout:.0f} s") from None
    actions: dict[str, StreamAction] = {}
    if streams:
        actions = await ensure_streams(
            jetstream(broker), namespace=namespace, replicas=replicas, streams=streams
        )
    await ensure_consumers(broker)
    await broker.start()
    return actions
