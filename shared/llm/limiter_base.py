"""The acquire/settle/pause loop every limiter shares, and the in-process `LocalLimiter`.

How an acquire proceeds: the request books the earliest slot at which all three budgets
of its model class admit it (one atomic state update), then sleeps until that slot. A
slot further away than `book_ahead_s` is not booked yet: the request waits until the
slot comes within reach, or until the budgets change (a refund from `settle`), and then
decides again. So capacity given back by a settle reaches waiters at once, and a
cancelled or crashed waiter strands at most `book_ahead_s` worth of capacity.

A booking is charged to all three budgets at its slot time (that is what keeps the sends
within every budget). Refunding a cancelled booking returns its units, but the other
budgets' clocks stay at that slot, at most `book_ahead_s` ahead: this delays others only
for a budget whose whole burst lasts less than `book_ahead_s`.

A pause (shared 429 retry-after) holds every request of the class; a slot that falls
inside a pause is given back and booked anew after it, so voided slots from every
process do not all go at the pause's end.

One limiter instance belongs to one event loop.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from shared.errors import BadInputError, TransientError
from shared.llm.limiter_config import LimiterConfig
from shared.llm.limiter_gcra import Booking, Rate, adjust, book
from shared.llm.limiting import ModelClass, Permit, model_class

log = logging.getLogger("shared.llm.limiter")

Triple = tuple[float, float, float]
FULL: Triple = (0.0, 0.0, 0.0)  # a TAT in the past means a full bucket

# Waking a hair before a pause ends would only lead to another short sleep.
_SLEEP_PAD_S = 0.001


class LimiterContentionError(TransientError):
    """The shared limiter state kept changing under us; the request was not admitted."""


@dataclass
class LimiterStats:
    """Counters for diagnostics and benchmarks (per limiter instance)."""

    admitted: int = 0  # acquires that returned a permit
    waits: int = 0  # decisions that found no slot within book_ahead_s
    cas_conflicts: int = 0  # shared-state writes refused for a stale revision
    fallbacks: int = 0  # switches from NATS to the in-process fallback


def _check_tokens(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadInputError(f"{name} must be an int >= 0, got {value!r}")
    return value


def _check_model(model: object) -> ModelClass:
    if not isinstance(model, str) or not model.strip():
        raise BadInputError(f"model must be a non-empty string, got {model!r}")
    return model_class(model)


def _negate(costs: Triple) -> Triple:
    return (-costs[0], -costs[1], -costs[2])


class BaseLimiter:
    """Shared front end: validation, per-class FIFO queueing, pauses, cancellation safety."""

    def __init__(self, config: LimiterConfig | None = None) -> None:
        self.config = config or LimiterConfig()
        self.rates: dict[ModelClass, tuple[Rate, Rate, Rate]] = {
            cls: limits.rates() for cls, limits in self.config.classes.items()
        }
        self.stats = LimiterStats()
        # Called with the seconds each decision took (backend time, not intentional waits).
        self.decision_observer: Callable[[float], None] | None = None
        self._pause_until: dict[ModelClass, float] = {}
        self._queues: dict[ModelClass, asyncio.Lock] = {}
        self._changed: dict[ModelClass, asyncio.Event] = {}
        self._background: set[asyncio.Task[Any]] = set()

    # -- backend hooks -------------------------------------------------------------------
    async def _start(self) -> None:
        """Bring up background machinery on the running loop (idempotent)."""

    async def _try_book(self, cls: ModelClass, costs: Triple) -> tuple[bool, float]:
        """Book `costs` if the slot is within `book_ahead_s`: (booked?, seconds to the slot)."""
        raise NotImplementedError

    async def _adjust(self, cls: ModelClass, deltas: Triple) -> None:
        """Charge or refund after the fact; must not raise on backend failure."""
        raise NotImplementedError

    async def _announce_pause(self, cls: ModelClass, until: float) -> None:
        """Make a pause visible to every process sharing the budgets."""

    # -- public API ----------------------------------------------------------------------
    async def acquire(self, *, model: str, input_tokens: int, output_tokens: int) -> Permit:
        """Wait until the request fits every budget (and any shared pause is over), then reserve."""
        cls = _check_model(model)
        costs: Triple = (
            1.0,
            float(_check_tokens("input_tokens", input_tokens)),
            float(_check_tokens("output_tokens", output_tokens)),
        )
        await self._start()
        # One request per class and process decides at a time (FIFO): at most one booking
        # per process is outstanding, KV contention is one contender per process, and a
        # big request cannot be starved by a stream of small ones.
        async with self._queue(cls):
            while not await self._book_and_wait(cls, costs):
                pass
        self.stats.admitted += 1
        return Permit(model_class=cls, input_tokens=input_tokens, output_tokens=output_tokens)

    async def _book_and_wait(self, cls: ModelClass, costs: Triple) -> bool:
        """Book a slot and sleep until it; False if a pause voided the slot (book again)."""
        while True:
            await self._sleep_out_pause(cls)
            booked, wait = await self._timed_try_book(cls, costs)
            if booked:
                break
            self.stats.waits += 1
            await self._wait_for_change(cls, wait - self.config.book_ahead_s)
        refund = _negate(costs)
        try:
            if wait > 0:
                await asyncio.sleep(wait)
        except asyncio.CancelledError:
            # Give the booked slot back: a cancelled acquire reserves nothing.
            self._spawn(self._adjust(cls, refund))
            raise
        if self._pause_until.get(cls, 0.0) <= time.time():
            return True
        # A pause began while we waited for the slot. Going at the pause's end together
        # with every other process's voided slot would bunch requests past the rate the
        # provider just refused: give the slot back and book anew after the pause.
        await asyncio.shield(self._spawn(self._adjust(cls, refund)))
        return False

    async def settle(self, permit: Permit, *, input_tokens: int, output_tokens: int) -> None:
        """Correct the reservation from the response's real usage (refund or charge the gap)."""
        if not isinstance(permit, Permit) or permit.model_class not in self.rates:
            raise BadInputError(f"settle needs a Permit from acquire, got {permit!r}")
        used_in = _check_tokens("input_tokens", input_tokens)
        used_out = _check_tokens("output_tokens", output_tokens)
        deltas: Triple = (
            0.0,
            float(used_in - permit.input_tokens),
            float(used_out - permit.output_tokens),
        )
        if deltas == (0.0, 0.0, 0.0):
            return
        await self._start()
        await self._adjust(permit.model_class, deltas)

    async def pause(self, *, model: str, until: float) -> None:
        """Announce a pause (epoch seconds, from a 429 retry-after) that every process honours."""
        cls = _check_model(model)
        if isinstance(until, bool) or not isinstance(until, int | float) or math.isnan(until):
            raise BadInputError(f"until must be epoch seconds, got {until!r}")
        now = time.time()
        if until <= now:
            return
        # A bogus retry-after (or inf) must not freeze every process for hours.
        until = min(float(until), now + self.config.max_pause_s)
        self.note_pause(cls, until)
        await self._start()
        await self._announce_pause(cls, until)

    def paused_until(self, model: str) -> float:
        """The pause this process currently knows of for the model's class (0.0 when none)."""
        return self._pause_until.get(_check_model(model), 0.0)

    def note_pause(self, cls: ModelClass, until: float) -> None:
        """Record a pause locally; pauses only ever extend."""
        if until > self._pause_until.get(cls, 0.0):
            self._pause_until[cls] = until

    async def aclose(self) -> None:
        """Let background work (decisions of cancelled callers, their refunds) finish, then stop."""
        deadline = time.monotonic() + 2 * self.config.kv_timeout_s
        # Loop: a decision finishing may spawn its refund.
        while pending := {t for t in self._background if not t.done()}:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            await asyncio.wait(pending, timeout=left)
        for task in list(self._background):
            task.cancel()

    # -- internals -----------------------------------------------------------------------
    def _queue(self, cls: ModelClass) -> asyncio.Lock:
        lock = self._queues.get(cls)
        if lock is None:
            lock = self._queues[cls] = asyncio.Lock()
        return lock

    def _signal_change(self, cls: ModelClass) -> None:
        """Wake unbooked waiters of a class: the budgets changed (e.g. a refund)."""
        event = self._changed.pop(cls, None)
        if event is not None:
            event.set()

    async def _wait_for_change(self, cls: ModelClass, at_most_s: float) -> None:
        event = self._changed.get(cls)
        if event is None:
            event = self._changed[cls] = asyncio.Event()
        try:
            await asyncio.wait_for(event.wait(), max(at_most_s, 0.0))
        except TimeoutError:
            pass

    async def _sleep_out_pause(self, cls: ModelClass) -> None:
        # A deadline, not an event: re-read after each sleep since pauses may be extended.
        while (left := self._pause_until.get(cls, 0.0) - time.time()) > 0:  # noqa: ASYNC110
            await asyncio.sleep(left + _SLEEP_PAD_S)

    async def _timed_try_book(self, cls: ModelClass, costs: Triple) -> tuple[bool, float]:
        started = time.perf_counter()
        try:
            return await self._try_book(cls, costs)
        finally:
            if self.decision_observer is not None:
                self.decision_observer(time.perf_counter() - started)

    def _spawn[T](self, coro: Coroutine[Any, Any, T]) -> asyncio.Task[T]:
        """Run `coro` as a tracked background task (aclose waits for it)."""
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    def _within_reach(self, booking: Booking) -> bool:
        return booking.wait <= self.config.book_ahead_s


class LocalLimiter(BaseLimiter):
    """The same GCRA budgets in this process's memory: single-process use and the fallback."""

    def __init__(self, config: LimiterConfig | None = None) -> None:
        super().__init__(config)
        self._state: dict[ModelClass, Triple] = {}

    async def _try_book(self, cls: ModelClass, costs: Triple) -> tuple[bool, float]:
        return self.try_book_now(cls, costs)

    def try_book_now(self, cls: ModelClass, costs: Triple) -> tuple[bool, float]:
        """Synchronous decision: book if within reach; (booked?, seconds to the slot)."""
        booking = book(self._state.get(cls, FULL), time.time(), costs, self.rates[cls])
        if not self._within_reach(booking):
            return False, booking.wait
        self._state[cls] = booking.state
        return True, booking.wait

    async def _adjust(self, cls: ModelClass, deltas: Triple) -> None:
        self.adjust_now(cls, deltas)

    def adjust_now(self, cls: ModelClass, deltas: Triple) -> None:
        """Synchronous charge/refund; wakes waiters so a refund is used at once."""
        self._state[cls] = adjust(self._state.get(cls, FULL), time.time(), deltas, self.rates[cls])
        self._signal_change(cls)
