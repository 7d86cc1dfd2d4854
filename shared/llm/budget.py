"""One retry budget per piece of work, shared by in-call retries and redeliveries.

A piece of work (one chunk of a source, say) may be tried by several deliveries of the
event that carries it, and each delivery's `call_llm` retries on its own. Without a shared
count a persistent 5xx costs retries × deliveries API calls (25 for one chunk). The
budget counts every API attempt of the work in a ledger that outlives a delivery (the
extractor's is in its store, so a crash or another replica continues the count): a
delivery may spend at most `per_delivery` attempts before it hands back to the bus, and
when `limit` is spent the work fails for good (LLMBudgetExhaustedError, permanent).
"""

from __future__ import annotations

import contextlib
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Protocol

from shared.llm.errors import LLMBudgetExhaustedError

DEFAULT_LIMIT = 5
DEFAULT_PER_DELIVERY = 3


class AttemptLedger(Protocol):
    """Where the attempts of each piece of work are counted."""

    async def used(self, key: str) -> int:
        """Attempts recorded so far for key (0 when none)."""
        ...

    async def record(self, key: str, used: int) -> None:
        """Store the attempts used for key."""
        ...

    async def forget(self, key: str) -> None:
        """Drop key's count (the work succeeded)."""
        ...


class MemoryLedger:
    """An in-process ledger (bounded: the oldest keys go first)."""

    def __init__(self, max_keys: int = 10_000) -> None:
        self._counts: OrderedDict[str, int] = OrderedDict()
        self._max = max_keys

    async def used(self, key: str) -> int:
        """Attempts recorded for key."""
        return self._counts.get(key, 0)

    async def record(self, key: str, used: int) -> None:
        """Store the count (most recent last)."""
        self._counts[key] = used
        self._counts.move_to_end(key)
        while len(self._counts) > self._max:
            self._counts.popitem(last=False)

    async def forget(self, key: str) -> None:
        """Drop key's count."""
        self._counts.pop(key, None)


@dataclass
class AttemptBudget:
    """The attempts one piece of work may still make; `spend` before every API attempt."""

    key: str
    ledger: AttemptLedger
    limit: int = DEFAULT_LIMIT
    per_delivery: int = DEFAULT_PER_DELIVERY
    _used: int | None = field(default=None, repr=False)
    _spent_here: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        if self.limit < 1 or self.per_delivery < 1:
            raise ValueError(f"a retry budget needs limit >= 1 and per_delivery >= 1: {self!r}")

    async def spend(self) -> None:
        """Count one attempt now (before it is made, so a crash cannot lose it)."""
        used = self._used if self._used is not None else await self.ledger.used(self.key)
        if used >= self.limit:
            self._used = used
            raise LLMBudgetExhaustedError(
                f"{self.key}: all {self.limit} API attempts of its retry budget are used"
            )
        self._used = used + 1
        self._spent_here += 1
        await self.ledger.record(self.key, self._used)

    @property
    def exhausted(self) -> bool:
        """No attempt is left at all (known after the first spend)."""
        return self._used is not None and self._used >= self.limit

    @property
    def delivery_done(self) -> bool:
        """This delivery spent its share: hand the work back to the bus (or give up)."""
        return self.exhausted or self._spent_here >= self.per_delivery

    async def succeeded(self) -> None:
        """The work is done: forget its count."""
        await self.ledger.forget(self.key)


_current: ContextVar[AttemptBudget | None] = ContextVar("r42_llm_budget", default=None)


def current_budget() -> AttemptBudget | None:
    """The budget of the work this task is doing (None outside attempt_budget)."""
    return _current.get()


@contextlib.contextmanager
def attempt_budget(budget: AttemptBudget) -> Iterator[AttemptBudget]:
    """Make every call_llm inside draw from `budget`."""
    token = _current.set(budget)
    try:
        yield budget
    finally:
        _current.reset(token)


_deadline: ContextVar[float | None] = ContextVar("r42_llm_deadline", default=None)


def current_deadline() -> float | None:
    """The epoch second by which the caller needs an answer (None: no deadline)."""
    return _deadline.get()


@contextlib.contextmanager
def answer_within(seconds: float, *, now: float | None = None) -> Iterator[float]:
    """Calls inside must answer within `seconds`: a shared pause past it fails at once."""
    deadline = (time.time() if now is None else now) + seconds
    token = _deadline.set(deadline)
    try:
        yield deadline
    finally:
        _deadline.reset(token)
