"""Durable JetStream consumers with explicit acks: ack, nack with backoff, or term + failure."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

from faststream.message import StreamMessage
from faststream.middlewares import AckPolicy
from faststream.nats import ConsumerConfig, JStream, NatsBroker, PullSub
from faststream.nats.annotations import NatsMessage
from nats.js.api import AckPolicy as JsAckPolicy
from nats.js.api import DeliverPolicy

from shared.bus.broker import publish_event, pull_inbox_prefix
from shared.bus.envelope import Event, derived_event_id
from shared.bus.events import DeadLetter
from shared.bus.registry import REGISTRY, parse_event, peek_event_id
from shared.bus.streams import stream_for_subject
from shared.bus.subjects import (
    FAILED_PREFIX,
    check_async_handler,
    ns_stream,
    ns_subject,
    strip_namespace,
)
from shared.errors import BadInputError, ConfigError, R42Error, is_transient

log = logging.getLogger(__name__)

E = TypeVar("E", bound=Event)
Handler = Callable[[E], Awaitable[None]]
# A service's own event for a delivery it gave up on (e.g. source.failed); the bus adds none.
OnFailure = Callable[[Any, str], Event | None]

_DURABLE_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_ERROR_MAX = 4000


@dataclass(frozen=True)
class Delivery:
    """Where and how often the message being handled was delivered."""

    subject: str
    stream: str
    consumer: str
    num_delivered: int
    max_deliver: int
    stream_seq: int | None

    @property
    def last(self) -> bool:
        """Whether JetStream will not deliver this message again after this attempt."""
        return self.num_delivered >= self.max_deliver


_current_delivery: ContextVar[Delivery | None] = ContextVar("r42_bus_delivery", default=None)

# What subscribe_event declared per broker, so start_broker can create-or-update each durable
# consumer (FastStream only creates missing ones: a changed max_deliver would never apply).
_DECLARED: WeakKeyDictionary[NatsBroker, list[tuple[str, ConsumerConfig]]] = WeakKeyDictionary()


def declared_consumers(broker: NatsBroker) -> list[tuple[str, ConsumerConfig]]:
    """(stream, consumer config) of every subscribe_event registered on `broker`."""
    return list(_DECLARED.get(broker, ()))


def current_delivery() -> Delivery | None:
    """The delivery being handled by this task (None outside a subscribe_event handler)."""
    return _current_delivery.get()


def nack_backoff(num_delivered: int, *, base: float, cap: float) -> float:
    """Delay before redelivery after failed delivery `num_delivered`: base·2^(n-1), capped."""
    return float(min(cap, base * 2 ** max(0, num_delivered - 1)))


def _error_text(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return text[:_ERROR_MAX]


def failure_event(
    event: Event, exc: BaseException, delivery: Delivery, *, logical_subject: str, actor: str
) -> Event | None:
    """The `failed.<subject>` dead letter for a consumer giving up (None for one itself)."""
    if logical_subject.startswith(FAILED_PREFIX):
        return None  # a failing dead-letter consumer must not feed itself
    return DeadLetter(
        event_id=derived_event_id(FAILED_PREFIX, event.event_id, delivery.consumer),
        correlation_id=event.correlation_id,
        actor=actor,
        original_subject=logical_subject,
        original_event_id=event.event_id,
        error=_error_text(exc),
        deliveries=delivery.num_delivered,
        consumer=delivery.consumer,
        stream=delivery.stream,
        stream_seq=delivery.stream_seq,
    )


async def _keepalive(message: Any, interval: float) -> None:
    # Tells JetStream we are still working so a slow handler is not redelivered elsewhere.
    while True:
        await asyncio.sleep(interval)
        try:
            await message.in_progress()
        except Exception:  # the real outcome's ack matters more than this signal
            log.debug("in_progress signal failed", exc_info=True)


@dataclass(frozen=True)
class _Consumer:
    broker: NatsBroker
    handler: Callable[[Any], Awaitable[None]]
    namespace: str
    actor: str
    max_deliver: int
    ack_wait: float
    nack_delay: float
    max_nack_delay: float
    on_failure: OnFailure | None = None

    async def process(self, message: Any) -> None:
        raw = message.raw_message
        meta = raw.metadata
        delivery = Delivery(
            subject=raw.subject,
            stream=meta.stream,
            consumer=meta.consumer,
            num_delivered=meta.num_delivered,
            max_deliver=self.max_deliver,
            stream_seq=meta.sequence.stream if meta.sequence else None,
        )
        try:
            event = parse_event(raw.subject, raw.data, namespace=self.namespace)
        except BadInputError as exc:
            await self._malformed(message, exc, delivery)
            return
        token = _current_delivery.set(delivery)
        keepalive = asyncio.create_task(_keepalive(message, max(self.ack_wait / 3, 0.05)))
        try:
            await self.handler(event)
        except asyncio.CancelledError:
            raise  # shutdown: unacked, JetStream redelivers after ack_wait
        except Exception as exc:  # every outcome is acked, nacked or termed: no default policy
            await self._failed(message, event, exc, delivery)
            return
        finally:
            keepalive.cancel()
            _current_delivery.reset(token)
        await message.ack()

    async def _malformed(self, message: Any, exc: BadInputError, delivery: Delivery) -> None:
        """A message no model accepts: term it and say so on `failed.<subject>` (never silent)."""
        raw = message.raw_message
        header_id = (raw.headers or {}).get("Nats-Msg-Id")
        original_id = str(header_id or peek_event_id(raw.data) or "")[:200] or None
        logical = strip_namespace(delivery.subject, self.namespace)
        log.warning(
            "terminating malformed message on %s (event_id=%s, stream seq %s): %s",
            raw.subject, original_id, delivery.stream_seq, exc,
        )  # fmt: skip
        if not logical.startswith(FAILED_PREFIX):
            seq = str(delivery.stream_seq) if delivery.stream_seq is not None else ""
            letter = DeadLetter(
                event_id=derived_event_id(FAILED_PREFIX, delivery.stream, seq, delivery.consumer),
                actor=self.actor,
                original_subject=logical,
                original_event_id=original_id,
                error=_error_text(exc),
                deliveries=delivery.num_delivered,
                consumer=delivery.consumer,
                stream=delivery.stream,
                stream_seq=delivery.stream_seq,
            )
            try:
                await publish_event(self.broker, letter, namespace=self.namespace)
            except R42Error as pub_exc:
                if not delivery.last:
                    # Without the dead letter nobody would learn of it: try again later.
                    await message.nack(delay=self.nack_delay)
                    return
                log.error("could not publish %s: %s", letter.subject, pub_exc)
        await message.reject()

    async def _failed(self, message: Any, event: Event, exc: Exception, delivery: Delivery) -> None:
        delay = nack_backoff(delivery.num_delivered, base=self.nack_delay, cap=self.max_nack_delay)
        if is_transient(exc) and not delivery.last:
            log.warning(
                "%s (event_id=%s) failed on delivery %d/%d, retrying in %.1f s: %s",
                delivery.subject, event.event_id, delivery.num_delivered, self.max_deliver,
                delay, _error_text(exc),
            )  # fmt: skip
            await message.nack(delay=delay)
            return
        logical = strip_namespace(delivery.subject, self.namespace)
        failures = [failure_event(event, exc, delivery, logical_subject=logical, actor=self.actor)]
        if self.on_failure is not None and not logical.startswith(FAILED_PREFIX):
            failures.append(self.on_failure(event, _error_text(exc)))
        reported = ""
        for failure in (f for f in failures if f is not None):
            try:
                await publish_event(self.broker, failure, namespace=self.namespace)
                reported += f", published {failure.subject}"
            except R42Error as pub_exc:
                if not delivery.last:
                    # Without the failure event nobody would learn of it: try again later.
                    log.warning("could not publish %s, will retry: %s", failure.subject, pub_exc)
                    await message.nack(delay=delay)
                    return
                reported += f", could not publish {failure.subject} ({pub_exc})"
        log.error(
            "gave up on %s (event_id=%s) after %d deliveries%s: %s",
            delivery.subject, event.event_id, delivery.num_delivered, reported, _error_text(exc),
            exc_info=exc if not isinstance(exc, R42Error) else None,
        )  # fmt: skip
        await message.reject()


async def _raw_body(message: StreamMessage[Any]) -> bytes:
    # parse_event decodes inside our error handling, so a malformed payload never crashes here.
    return message.body


def subscribe_event[E: Event](
    broker: NatsBroker,
    event_cls: type[E],
    *,
    durable: str,
    handler: Handler[E],
    namespace: str = "",
    actor: str | None = None,
    max_deliver: int = 5,
    ack_wait: float = 30.0,
    nack_delay: float = 1.0,
    max_nack_delay: float = 60.0,
    max_workers: int = 1,
    fetch_timeout: float = 5.0,
    on_failure: OnFailure | None = None,
) -> Any:
    """Register a durable pull consumer that hands typed events to `handler`, acking explicitly.

    Success → ack. TransientError (or is_transient) → nack, redelivered after
    nack_delay·2^(n-1) (capped), at most max_deliver times. Anything else, or a transient
    error on the last delivery → term + `failed.<subject>` (DeadLetter), plus the event
    `on_failure(event, error)` returns (a service's own failure event). Malformed payloads
    are termed and logged. Replicas using the same `durable` share the work. Register
    before start_broker.
    """
    if not (isinstance(event_cls, type) and issubclass(event_cls, Event)):
        raise ConfigError(f"subscribe_event needs an Event subclass, got {event_cls!r}")
    if event_cls is not DeadLetter and REGISTRY.get(event_cls.SUBJECT) is not event_cls:
        raise ConfigError(f"{event_cls.__name__} is not a registered event model")
    if not _DURABLE_RE.fullmatch(durable):
        raise ConfigError(f"durable name {durable!r}: use 1-64 letters, digits, '_' or '-'")
    check_async_handler(handler, f"{event_cls.__name__}")
    if max_deliver < 1 or ack_wait <= 0 or nack_delay < 0 or max_workers < 1:
        raise ConfigError("need max_deliver >= 1, ack_wait > 0, nack_delay >= 0, max_workers >= 1")
    logical = event_cls.SUBJECT
    stream = ns_stream(stream_for_subject(logical).name, namespace)
    consumer = _Consumer(
        broker=broker, handler=handler, namespace=namespace,
        actor=actor or durable, max_deliver=max_deliver, ack_wait=ack_wait,
        nack_delay=nack_delay, max_nack_delay=max(max_nack_delay, nack_delay),
        on_failure=on_failure,
    )  # fmt: skip
    wire_subject = ns_subject(logical, namespace)
    config = ConsumerConfig(
        name=durable,
        durable_name=durable,
        filter_subject=wire_subject,
        ack_policy=JsAckPolicy.EXPLICIT,
        # ALL, not NEW: events published before this consumer first existed still count.
        deliver_policy=DeliverPolicy.ALL,
        max_deliver=max_deliver,
        ack_wait=ack_wait,
    )
    _DECLARED.setdefault(broker, []).append((stream, config))
    subscriber = broker.subscriber(
        wire_subject,
        # declare=False: streams are owned by ensure_streams, never by FastStream's declarer.
        stream=JStream(stream, declare=False),
        durable=durable,
        pull_sub=PullSub(batch_size=1, timeout=fetch_timeout),
        config=config,
        # FastStream's JetStream default is REJECT_ON_ERROR; we ack/nack/term ourselves.
        ack_policy=AckPolicy.MANUAL,
        max_workers=max_workers if max_workers > 1 else None,
        decoder=_raw_body,
        no_reply=True,
        # FastStream would pass "_INBOX." here over the connection's own prefix; with NATS
        # auth each user may only subscribe under its own inbox prefix.
        inbox_prefix=pull_inbox_prefix(broker),
        title=f"{durable}:{logical}",
        description=f"{durable} consumes {event_cls.__name__} ({logical})",
    )

    async def on_message(body: bytes, msg: NatsMessage) -> None:
        del body  # the raw message carries the bytes and the JetStream metadata
        await consumer.process(msg)

    subscriber(on_message)
    return subscriber
