"""The FastStream NatsBroker factory and JetStream publishing of events."""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from typing import Any

from faststream.exceptions import IncorrectState
from faststream.nats import NatsBroker, PubAck
from nats.aio.client import Server
from nats.errors import Error as NatsError
from nats.js import JetStreamContext
from nats.js.errors import APIError, NoStreamResponseError

from shared.bus.auth import NatsAuth
from shared.bus.election import LEADERLESS_FOR_S, through_election
from shared.bus.envelope import Event
from shared.bus.streams import stream_for_subject
from shared.bus.subjects import ns_stream, ns_subject
from shared.config import nats_servers
from shared.errors import BadInputError, BusError, ConfigError

log = logging.getLogger(__name__)

RECONNECT_BASE_S = 0.5
RECONNECT_CAP_S = 15.0


def reconnect_delay(
    attempt: int, *, base: float = RECONNECT_BASE_S, cap: float = RECONNECT_CAP_S
) -> float:
    """Backoff before reconnect attempt `attempt` (0 = first): exponential, capped, jittered."""
    if attempt <= 0:
        return 0.0
    ceiling = float(min(cap, base * 2.0 ** (attempt - 1)))
    # Equal jitter: never below half the ceiling, so a flapping server is not hammered.
    return ceiling / 2 + random.uniform(0, ceiling / 2)


def _pick_server(servers: list[Server], _info: dict[str, Any]) -> tuple[Server | None, float]:
    # nats-py asks this before every reconnect attempt; the least-failed server goes first.
    server = min(servers, key=lambda s: s.reconnects)
    return server, reconnect_delay(server.reconnects)


def build_broker(
    url: str | Sequence[str],
    *,
    name: str,
    connect_timeout: float = 5.0,
    ping_interval: int = 20,
    max_outstanding_pings: int = 3,
    drain_timeout: int = 10,
    graceful_timeout: float | None = 15.0,
    log_level: int = logging.DEBUG,
    auth: NatsAuth | None = None,
    **options: Any,
) -> NatsBroker:
    """A NatsBroker that reconnects forever with jittered backoff; nothing connects yet."""
    servers = nats_servers(url) if isinstance(url, str) else list(url)
    if not servers or not all(isinstance(s, str) and s.strip() for s in servers):
        raise ConfigError("NATS url must be a non-empty string (or list of them)")
    if not name or not name.strip():
        raise ConfigError("broker name is required (it labels the connection in monitoring)")
    return NatsBroker(
        servers,
        name=name,
        allow_reconnect=True,
        max_reconnect_attempts=-1,
        reconnect_time_wait=2,
        reconnect_to_server_handler=_pick_server,
        # FastStream annotates it int; nats-py takes float seconds.
        connect_timeout=connect_timeout,  # type: ignore[arg-type]
        ping_interval=ping_interval,
        max_outstanding_pings=max_outstanding_pings,
        drain_timeout=drain_timeout,
        graceful_timeout=graceful_timeout,
        # Per-message "Received/Processed" lines are noise at INFO in production.
        log_level=log_level,
        # A plain logger that propagates to the process's handlers: FastStream's default one
        # forces ANSI colours, which end up in the service log files.
        logger=options.pop("logger") if "logger" in options else _faststream_logger(),
        **(auth.options() if auth else {}),
        **options,
    )


def pull_inbox_prefix(broker: NatsBroker) -> bytes:
    """The inbox prefix (with its trailing dot) pull consumers of this broker deliver to."""
    kwargs = getattr(broker, "_connection_kwargs", None) or {}
    prefix = kwargs.get("inbox_prefix") or "_INBOX"
    text = prefix.decode() if isinstance(prefix, bytes) else str(prefix)
    return f"{text}.".encode()


def jetstream(broker: NatsBroker) -> JetStreamContext:
    """The JetStream context of a connected broker."""
    try:
        stream: JetStreamContext = broker.config.connection_state.stream
        return stream
    except IncorrectState as exc:
        raise BusError("the broker is not connected to NATS") from exc


def is_connected(broker: NatsBroker) -> bool:
    """Whether the broker has a live NATS connection right now."""
    try:
        return bool(broker.config.connection_state.connection.is_connected)
    except IncorrectState:
        return False


async def publish_event(
    broker: NatsBroker,
    event: Event,
    *,
    namespace: str = "",
    timeout: float = 5.0,  # noqa: ASYNC109 - the JetStream ack wait, passed to nats-py
    leaderless_for: float = LEADERLESS_FOR_S,
) -> PubAck:
    """Publish to JetStream with `Nats-Msg-Id` = event_id and wait for the stream's ack.

    While a clustered stream elects a new leader nothing answers; the publish is repeated
    (safe: the stream drops a repeated Nats-Msg-Id) for up to `leaderless_for` seconds.
    """
    if not isinstance(event, Event):
        raise BadInputError(f"publish_event needs an Event, got {type(event).__name__}")
    try:
        return await through_election(
            lambda: _publish_once(broker, event, namespace=namespace, timeout=timeout),
            leaderless=(_Leaderless,),
            within=leaderless_for,
        )
    except _Leaderless as exc:
        raise BusError(
            f"publish of {event.subject} failed: no stream answered for "
            f"{leaderless_for:g} s ({type(exc.__cause__).__name__})"
        ) from exc


class _Leaderless(Exception):
    """No stream answered the publish (a leader election, a restarting node)."""


async def _publish_once(
    broker: NatsBroker,
    event: Event,
    *,
    namespace: str,
    timeout: float,  # noqa: ASYNC109
) -> PubAck:
    subject = ns_subject(event.subject, namespace)
    stream = ns_stream(stream_for_subject(event.subject).name, namespace)
    try:
        ack: PubAck = await broker.publish(
            event.to_bytes(),
            subject,
            headers={"Nats-Msg-Id": event.event_id, "content-type": "application/json"},
            correlation_id=event.correlation_id,
            stream=stream,
            timeout=timeout,
        )
    except IncorrectState as exc:
        raise BusError(f"cannot publish {event.subject}: the broker is not connected") from exc
    except APIError as exc:
        if exc.code == 400 and "size" in (exc.description or "").lower():
            raise BadInputError(f"{event.subject} event too large: {exc.description}") from exc
        raise BusError(f"JetStream refused {event.subject} on {stream}: {exc.description}") from exc
    except NoStreamResponseError as exc:
        raise _Leaderless() from exc
    except (NatsError, TimeoutError, OSError) as exc:
        raise BusError(f"publish of {event.subject} failed: {type(exc).__name__} {exc}") from exc
    return ack


class _TaskCallbackChatter(logging.Filter):
    """Drops FastStream's "callback for Task-N is being executed..." line, logged at INFO
    whenever a subscriber's task ends (every consumer, on every stop): it says nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not (message.startswith("callback for ") and message.endswith("being executed..."))


def _faststream_logger() -> logging.Logger:
    logger = logging.getLogger("r42.faststream")
    if not any(isinstance(f, _TaskCallbackChatter) for f in logger.filters):
        logger.addFilter(_TaskCallbackChatter())
    return logger
