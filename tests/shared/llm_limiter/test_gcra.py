"""The pure GCRA math: burst, steady rate, multi-unit costs, refunds, oversize, booking."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from shared.llm.limiter import Rate, book, gcra_adjust, gcra_step
from shared.llm.limiter_gcra import available

NOW = 1_700_000_000.0
PER_SECOND = Rate(per_second=1.0, burst=5)


@pytest.mark.parametrize(
    ("per_second", "burst"),
    [(0, 1), (-1, 1), (1, 0), (1, -2), (math.nan, 1), (1, math.inf), (math.inf, 1)],
)
def test_rate_rejects_non_positive_or_non_finite(per_second: float, burst: float) -> None:
    with pytest.raises(ValueError):
        Rate(per_second=per_second, burst=burst)


@pytest.mark.parametrize(
    ("tat", "now", "cost"),
    [(NOW, NOW, -1), (NOW, NOW, math.nan), (math.nan, NOW, 1), (NOW, math.inf, 1)],
)
def test_step_rejects_bad_numbers(tat: float, now: float, cost: float) -> None:
    with pytest.raises(ValueError):
        gcra_step(tat, now, cost, PER_SECOND)


def test_fresh_bucket_admits_exactly_the_burst() -> None:
    tat, admitted = 0.0, 0
    for _ in range(10):
        step = gcra_step(tat, NOW, 1, PER_SECOND)
        if not step.admitted:
            assert step.wait == pytest.approx(1.0)  # the next unit replenishes in 1 s
            assert step.tat == tat  # a refusal changes nothing
            break
        tat, admitted = step.tat, admitted + 1
    assert admitted == 5


def test_steady_rate_admits_one_unit_per_interval() -> None:
    rate = Rate(per_second=4.0, burst=1)
    tat, now, admitted_at = 0.0, NOW, []
    while now < NOW + 10:
        step = gcra_step(tat, now, 1, rate)
        if step.admitted:
            tat = step.tat
            admitted_at.append(now)
        now += 0.01
    gaps = [b - a for a, b in itertools.pairwise(admitted_at)]
    assert len(admitted_at) == pytest.approx(40, abs=1)
    assert min(gaps) >= 0.25 - 1e-6


def test_multi_unit_costs_share_the_burst() -> None:
    rate = Rate(per_second=1.0, burst=10)
    first = gcra_step(0.0, NOW, 4, rate)
    second = gcra_step(first.tat, NOW, 4, rate)
    third = gcra_step(second.tat, NOW, 4, rate)
    assert first.admitted and second.admitted
    assert not third.admitted
    assert third.wait == pytest.approx(2.0)  # 2 units left, 2 more needed at 1/s
    assert gcra_step(second.tat, NOW + third.wait, 4, rate).admitted


def test_available_reports_the_remaining_units() -> None:
    rate = Rate(per_second=2.0, burst=10)
    tat = gcra_step(0.0, NOW, 6, rate).tat
    assert available(tat, NOW, rate) == pytest.approx(4)
    assert available(tat, NOW + 1, rate) == pytest.approx(6)
    assert available(tat, NOW + 100, rate) == pytest.approx(10)  # never above the burst


def test_oversize_request_is_admitted_when_the_bucket_is_full_and_charged_in_full() -> None:
    rate = Rate(per_second=1.0, burst=10)
    step = gcra_step(0.0, NOW, 25, rate)
    assert step.admitted
    assert available(step.tat, NOW, rate) == pytest.approx(-15)  # in debt
    nxt = gcra_step(step.tat, NOW, 1, rate)
    assert not nxt.admitted
    assert nxt.wait == pytest.approx(16.0)  # repay 15, then 1 for itself


def test_oversize_request_waits_only_until_the_bucket_is_full() -> None:
    rate = Rate(per_second=1.0, burst=10)
    tat = gcra_step(0.0, NOW, 3, rate).tat
    step = gcra_step(tat, NOW, 25, rate)
    assert not step.admitted
    assert step.wait == pytest.approx(3.0)
    assert gcra_step(tat, NOW + step.wait, 25, rate).admitted


def test_oversize_requests_never_deadlock_and_keep_the_long_run_rate() -> None:
    rate = Rate(per_second=10.0, burst=5)
    tat, now, units = 0.0, NOW, 0
    for _ in range(50):
        step = gcra_step(tat, now, 30, rate)
        if not step.admitted:
            now += step.wait
            step = gcra_step(tat, now, 30, rate)
        assert step.admitted
        tat, units = step.tat, units + 30
    # 50 x 30 units at 10/s need 150 s; the first needed none of it (full bucket).
    assert now - NOW == pytest.approx((units - 30) / 10.0, rel=1e-6)


def test_refund_restores_capacity_but_never_above_full() -> None:
    rate = Rate(per_second=1.0, burst=10)
    tat = gcra_step(0.0, NOW, 8, rate).tat
    refunded = gcra_adjust(tat, NOW, -5, rate)
    assert available(refunded, NOW, rate) == pytest.approx(7)
    over = gcra_adjust(tat, NOW, -50, rate)
    assert over == NOW  # full, not "more than full"
    assert available(over, NOW, rate) == pytest.approx(10)


def test_charge_after_the_fact_creates_debt_from_now() -> None:
    rate = Rate(per_second=1.0, burst=10)
    assert gcra_adjust(0.0, NOW, 4, rate) == pytest.approx(NOW + 4)  # old TAT: starts at now
    charged = gcra_adjust(NOW + 8, NOW, 6, rate)
    assert available(charged, NOW, rate) == pytest.approx(-4)


def test_adjust_rejects_bad_numbers() -> None:
    with pytest.raises(ValueError):
        gcra_adjust(NOW, NOW, math.nan, PER_SECOND)


RATES = (
    Rate(per_second=1.0, burst=3),  # requests
    Rate(per_second=100.0, burst=1000),  # input tokens
    Rate(per_second=10.0, burst=100),  # output tokens
)


def test_book_admits_now_when_every_budget_fits() -> None:
    booking = book((0.0, 0.0, 0.0), NOW, (1, 500, 50), RATES)
    assert booking.wait == 0 and booking.at == NOW
    assert booking.state == pytest.approx((NOW + 1, NOW + 5, NOW + 5))


def test_book_waits_for_the_slowest_budget_and_charges_all_at_that_time() -> None:
    state = book((0.0, 0.0, 0.0), NOW, (1, 0, 100), RATES).state  # output budget emptied
    booking = book(state, NOW, (1, 10, 20), RATES)
    assert booking.wait == pytest.approx(2.0)  # 20 output tokens at 10/s
    at = NOW + 2.0
    # Each budget is charged as if the request arrived at `at`.
    assert booking.state[0] == pytest.approx(max(state[0], at) + 1.0)
    assert booking.state[1] == pytest.approx(at + 0.1)
    assert booking.state[2] == pytest.approx(state[2] + 2.0)


def test_book_with_a_zero_cost_budget_still_respects_debt() -> None:
    state = book((0.0, 0.0, 0.0), NOW, (1, 0, 150), RATES).state  # 50 output tokens in debt
    assert book(state, NOW, (1, 0, 0), RATES).wait == pytest.approx(5.0)


@pytest.mark.parametrize("seed", range(20))
def test_bookings_conform_to_every_budget(seed: int) -> None:
    """Random arrivals and costs: any window holds at most burst + rate x length per budget."""
    rng = random.Random(seed)
    state, now, booked = (0.0, 0.0, 0.0), NOW, []
    for _ in range(150):
        now += rng.expovariate(3.0)
        costs = (1.0, float(rng.randint(0, 900)), float(rng.randint(0, 100)))
        if rng.random() < 0.1:
            costs = (1.0, 0.0, 0.0)
        booking = book(state, now, costs, RATES)
        assert booking.at >= now
        if booked:
            assert booking.at >= booked[-1][0] - 1e-9  # slots never go back in time
        state = booking.state
        booked.append((booking.at, costs))
    for b, rate in enumerate(RATES):
        for i in range(len(booked)):
            spent = 0.0
            for j in range(i, len(booked)):
                spent += booked[j][1][b]
                window = booked[j][0] - booked[i][0]
                # Saturated windows meet the bound exactly; allow float noise on epoch times.
                assert spent <= rate.burst + rate.per_second * window + 1e-3
