"""Waiting for the answer events of one request: core-NATS taps routed by a correlation key.

JetStream publishes are ordinary NATS messages too, so a plain (non-durable) subscription
on `content.ready` sees every event without taking work from the durable consumers. The
console uses this to await the reply to its own request; nothing is acked or stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

from faststream.nats import NatsBroker
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from shared.bus import Event, parse_event, subscriptions_settled
from shared.bus.subjects import ns_subject
from shared.errors import BadInputError, BusError

log = logging.getLogger(__name__)

KeyFn = Callable[[Any], str | None]
_SEEN_MAX = 4096


def reply_key(event: Any) -> str | None:
    """The request an answer event belongs to: reply_to.request_id, else the correlation id."""
    reply_to = getattr(event, "reply_to", None) or {}
    key = reply_to.get("request_id") if isinstance(reply_to, dict) else None
    return str(key) if key else (event.correlation_id or None)


def source_key(event: Any) -> str | None:
    """Source events are keyed by their source id."""
    return getattr(event, "source_id", None)


class EventWaiter:
    """Routes tapped events to the queues watching their key; duplicates are dropped."""

    def __init__(self, broker: NatsBroker, *, namespace: str = "") -> None:
        self._broker = broker
        self._namespace = namespace
        self._watchers: dict[str, set[asyncio.Queue[Event]]] = {}
        self._subs: list[Subscription] = []
        self._seen: OrderedDict[str, None] = OrderedDict()

    async def start(self, taps: Mapping[type[Event], KeyFn]) -> None:
        """Subscribe to each event class's subject (once the broker is connected)."""
        try:
            nc = self._broker.connection
        except Exception as exc:  # FastStream raises IncorrectState before connect
            raise BusError("the waiter needs a connected broker") from exc
        for cls, key_fn in taps.items():
            subject = ns_subject(cls.SUBJECT, self._namespace)
            self._subs.append(await nc.subscribe(subject, cb=self._callback(key_fn)))
        await subscriptions_settled(nc)  # the taps exist before anyone publishes a request

    def _callback(self, key_fn: KeyFn) -> Callable[[Msg], Any]:
        async def on_msg(msg: Msg) -> None:
            try:
                event = parse_event(msg.subject, msg.data, namespace=self._namespace)
            except BadInputError as exc:
                log.warning("ignoring malformed event on %s: %s", msg.subject, exc)
                return
            key = key_fn(event)
            if not key or key not in self._watchers or self._is_duplicate(event.event_id):
                return
            for queue in self._watchers.get(key, ()):
                queue.put_nowait(event)

        return on_msg

    def _is_duplicate(self, event_id: str) -> bool:
        # A re-published event (same id) reaches core subscribers although the stream drops it.
        if event_id in self._seen:
            return True
        self._seen[event_id] = None
        while len(self._seen) > _SEEN_MAX:
            self._seen.popitem(last=False)
        return False

    @contextlib.asynccontextmanager
    async def watch(self, key: str) -> AsyncIterator[asyncio.Queue[Event]]:
        """A queue of every event with `key` while the block runs (open it before publishing)."""
        queue: asyncio.Queue[Event] = asyncio.Queue()
        self._watchers.setdefault(key, set()).add(queue)
        try:
            yield queue
        finally:
            queues = self._watchers.get(key)
            if queues is not None:
                queues.discard(queue)
                if not queues:
                    del self._watchers[key]

    async def close(self) -> None:
        """Unsubscribe every tap."""
        for sub in self._subs:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        self._subs.clear()


async def next_event(queue: asyncio.Queue[Event], *, timeout: float, what: str) -> Event:  # noqa: ASYNC109
    """The next event from a watch queue, or BusError after `timeout` seconds."""
    try:
        return await asyncio.wait_for(queue.get(), timeout)
    except TimeoutError:
        raise BusError(f"no answer for {what} within {timeout:g} s") from None
