"""Pure GCRA (generic cell rate algorithm) math shared by every limiter backend.

A budget is described by a rate (units per second) and a burst (units admitted at once
when idle). Its whole state is one number, the theoretical arrival time (TAT, epoch
seconds): the bucket is full when TAT <= now and holds `(now + tau - TAT) * rate` units
otherwise, where tau = burst / rate. Keeping the state a single float is what lets it
live in one NATS KV value updated with compare-and-swap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# Float noise on epoch-second timestamps (~2e-7 s resolution near 1.7e9) must not turn
# an exact fit into a microsecond wait and an extra KV round trip.
_EPSILON_S = 1e-6

# Order of the three budgets inside a class state and a cost triple.
BUDGETS = ("requests", "input_tokens", "output_tokens")


@dataclass(frozen=True, slots=True)
class Rate:
    """One budget's pace: `per_second` units replenish each second, up to `burst` units."""

    per_second: float
    burst: float

    def __post_init__(self) -> None:
        for name in ("per_second", "burst"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {value!r}")

    @property
    def interval(self) -> float:
        """Seconds one unit occupies (the emission interval)."""
        return 1.0 / self.per_second

    @property
    def tau(self) -> float:
        """How far ahead of now the TAT may run and still admit (the burst, in seconds)."""
        return self.burst / self.per_second


@dataclass(frozen=True, slots=True)
class Step:
    """The outcome of one GCRA check: admitted with a new TAT, or the wait until it would be."""

    admitted: bool
    tat: float
    wait: float


def _check_time(name: str, value: float) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value)):
        raise ValueError(f"{name} must be a finite number, got {value!r}")


def gcra_step(tat: float, now: float, cost: float, rate: Rate) -> Step:
    """Check `cost` units against one budget at `now`; admit (new TAT) or say how long to wait.

    A cost larger than the whole burst could never fit. It is admitted once the bucket is
    full (TAT <= now) and charged in full, so the debt pushes the TAT past now + tau and
    later requests wait until the long-run rate is restored: oversize requests never
    deadlock and never raise the average rate.
    """
    _check_time("tat", tat)
    _check_time("now", now)
    if not (isinstance(cost, int | float) and math.isfinite(cost) and cost >= 0):
        raise ValueError(f"cost must be a finite number >= 0, got {cost!r}")
    base = max(tat, now)
    allow_at = base + min(cost, rate.burst) * rate.interval - rate.tau
    if allow_at <= now + _EPSILON_S:
        return Step(admitted=True, tat=base + cost * rate.interval, wait=0.0)
    return Step(admitted=False, tat=tat, wait=allow_at - now)


def gcra_adjust(tat: float, now: float, delta: float, rate: Rate) -> float:
    """Charge (delta > 0) or refund (delta < 0) units after the fact; never waits.

    A charge may push the bucket into debt (later requests wait longer); a refund never
    fills the bucket past full, i.e. the TAT never drops below now.
    """
    _check_time("tat", tat)
    _check_time("now", now)
    _check_time("delta", delta)
    if delta >= 0:
        return max(tat, now) + delta * rate.interval
    return max(tat + delta * rate.interval, now)


@dataclass(frozen=True, slots=True)
class Booking:
    """A reservation across the three budgets of a class: the new state and when it may go."""

    state: tuple[float, float, float]
    at: float
    wait: float


def book(
    state: tuple[float, float, float],
    now: float,
    costs: tuple[float, float, float],
    rates: tuple[Rate, Rate, Rate],
) -> Booking:
    """Reserve the earliest time (>= now) at which requests, input and output budgets all admit.

    The request is charged as if it arrived at that time `at` in every budget, so a booking
    is exactly a GCRA admission at `at`; and since each booking's `at` is no earlier than
    the previous one's on the budget that bound it, the stream of bookings stays within
    burst + rate x window for each budget. Booking (rather than check-and-retry) makes a
    decision one compare-and-swap, however many processes are waiting.
    """
    at = now
    for tat, cost, rate in zip(state, costs, rates, strict=True):
        step = gcra_step(tat, now, cost, rate)
        at = max(at, now + step.wait)
    t0, t1, t2 = (
        max(tat, at) + cost * rate.interval
        for tat, cost, rate in zip(state, costs, rates, strict=True)
    )
    return Booking(state=(t0, t1, t2), at=at, wait=at - now)


def adjust(
    state: tuple[float, float, float],
    now: float,
    deltas: tuple[float, float, float],
    rates: tuple[Rate, Rate, Rate],
) -> tuple[float, float, float]:
    """Apply after-the-fact charges/refunds to all three budgets of a class."""
    t0, t1, t2 = (gcra_adjust(t, now, d, r) for t, d, r in zip(state, deltas, rates, strict=True))
    return (t0, t1, t2)


def available(tat: float, now: float, rate: Rate) -> float:
    """Units the budget would admit right now (negative when in debt); for logs and tests."""
    return (now + rate.tau - max(tat, now)) * rate.per_second
