"""A TelemetrySink that publishes `llm.call.logged` in the background, never blocking the caller."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging

from faststream.nats import NatsBroker

from shared.bus.broker import is_connected, publish_event
from shared.bus.events import LLMCallLogged
from shared.llm.telemetry import LLMCallRecord

log = logging.getLogger(__name__)


class BusTelemetrySink:
    """Queues records and publishes them from one background task on the caller's loop.

    `emit` is synchronous and O(1): when the queue is full, the loop is gone or the bus is
    down, the record is dropped (one warning per outage, counted in `dropped`). Call
    `aclose()` on shutdown so queued records are published before the broker stops.
    """

    def __init__(
        self,
        broker: NatsBroker,
        *,
        actor: str,
        namespace: str = "",
        max_queue: int = 1000,
        publish_timeout: float = 2.0,
    ) -> None:
        self._broker = broker
        self._actor = actor
        self._namespace = namespace
        self._publish_timeout = publish_timeout
        # Each record keeps the context it was emitted in, so the publish continues its trace.
        self._queue: asyncio.Queue[tuple[LLMCallLogged, contextvars.Context]] = asyncio.Queue(
            maxsize=max_queue
        )
        self._loop: asyncio.AbstractEventLoop | None = None
        self._worker: asyncio.Task[None] | None = None
        self._closed = False
        self._degraded = False
        self.dropped = 0
        self.published = 0

    def emit(self, record: LLMCallRecord) -> None:
        """Schedule the publish of one record; never raises, never blocks."""
        try:
            self._emit(record)
        except Exception:  # telemetry must never fail the LLM call
            self._drop("unexpected error", exc_info=True)

    def _emit(self, record: LLMCallRecord) -> None:
        if self._closed:
            self._drop("sink closed")
            return
        event = LLMCallLogged(actor=self._actor, record=record)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None or (self._loop is not None and loop is not self._loop):
            # Called from another thread: hand over to the loop that owns the queue.
            if self._loop is not None and self._loop.is_running():
                self._loop.call_soon_threadsafe(self._enqueue, event)
            else:
                self._drop("no running event loop")
            return
        self._loop = loop
        self._enqueue(event)

    def _enqueue(self, event: LLMCallLogged) -> None:
        try:
            self._queue.put_nowait((event, contextvars.copy_context()))
        except asyncio.QueueFull:
            self._drop("queue full")
            return
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(self._run())

    def _drop(self, reason: str, *, exc_info: bool = False) -> None:
        self.dropped += 1
        if not self._degraded:
            self._degraded = True
            log.warning(
                "dropping llm.call.logged telemetry (%s); further drops are counted quietly",
                reason,
                exc_info=exc_info,
            )

    async def _run(self) -> None:
        while True:
            event, context = await self._queue.get()
            try:
                await asyncio.create_task(self._publish(event), context=context)
            finally:
                self._queue.task_done()

    async def _publish(self, event: LLMCallLogged) -> None:
        if not is_connected(self._broker):
            self._drop("bus not connected")
            return
        try:
            await publish_event(
                self._broker, event, namespace=self._namespace, timeout=self._publish_timeout
            )
        except Exception as exc:  # a failed publish is a dropped record, never a crash
            self._drop(f"publish failed: {exc}")
            return
        self.published += 1
        if self._degraded:
            self._degraded = False
            log.info("llm.call.logged telemetry recovered (%d dropped so far)", self.dropped)

    async def flush(self, timeout: float = 5.0) -> bool:  # noqa: ASYNC109 - shutdown budget
        """Wait until everything queued is published (or dropped); False on timeout."""
        try:
            await asyncio.wait_for(self._queue.join(), timeout)
        except TimeoutError:
            return False
        return True

    async def aclose(self, timeout: float = 5.0) -> None:  # noqa: ASYNC109 - shutdown budget
        """Stop accepting records, flush what is queued, stop the background task."""
        self._closed = True
        if not await self.flush(timeout):
            log.warning("telemetry flush timed out; %d records lost", self._queue.qsize())
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
            self._worker = None
