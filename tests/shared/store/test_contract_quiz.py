"""Contract: quiz attempts (one active, answer once, idle expiry) and scores, on every adapter."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from shared.errors import BadInputError, NotFoundError
from shared.store import QuizAttempt, Store

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
WEEK = "2026-W10"


def attempt(aid: str, user: str = "U1", n: int = 3, **kw: object) -> QuizAttempt:
    keys = [f"question {i}" for i in range(n)]
    data = {
        "id": aid,
        "user": user,
        "week": WEEK,
        "question_keys": keys,
        "idle_timeout_s": 600,
        **kw,
    }
    return QuizAttempt.model_validate(data)


async def test_one_active_attempt_per_user(store: Store) -> None:
    started = await store.quiz_attempts.start(attempt("a1"), now=T0)
    assert (started.id, started.status, started.started_at) == ("a1", "active", T0)
    assert started.expires_at == T0 + timedelta(seconds=600)
    # A second start while a1 is active returns a1; a redelivered start of a1 too.
    assert (await store.quiz_attempts.start(attempt("a2"), now=T0)).id == "a1"
    assert (await store.quiz_attempts.start(attempt("a1"), now=T0)).id == "a1"
    assert (await store.quiz_attempts.start(attempt("b1", user="U2"), now=T0)).id == "b1"
    assert (await store.quiz_attempts.get_active_attempt("U1", now=T0)).id == "a1"  # type: ignore[union-attr]
    assert await store.quiz_attempts.get("a2") is None


async def test_concurrent_starts_leave_one_active(store: Store) -> None:
    starts = [store.quiz_attempts.start(attempt(f"c{i}"), now=T0) for i in range(6)]
    results = await asyncio.gather(*starts)
    assert len({r.id for r in results}) == 1
    assert len(await store.quiz_attempts.list_for_user("U1")) == 1


async def test_idle_expiry_is_the_quiz_active_flag(store: Store) -> None:
    await store.quiz_attempts.start(attempt("a1"), now=T0)
    later = T0 + timedelta(seconds=599)
    assert await store.quiz_attempts.get_active_attempt("U1", now=later) is not None
    result = await store.quiz_attempts.record_answer("a1", 0, 1, correct=False, points=0, now=later)
    assert result.accepted
    # Activity extends the deadline.
    assert await store.quiz_attempts.get_active_attempt("U1", now=later + timedelta(seconds=599))
    idle = later + timedelta(seconds=600)
    assert await store.quiz_attempts.get_active_attempt("U1", now=idle) is None
    late = await store.quiz_attempts.record_answer("a1", 1, 0, correct=True, points=10, now=idle)
    assert (late.accepted, late.reason, late.attempt.status) == (False, "not_active", "expired")
    assert (await store.scores.get("U1", WEEK)).points == 0  # type: ignore[union-attr]
    # After expiry a new quiz can start.
    assert (await store.quiz_attempts.start(attempt("a2"), now=idle)).id == "a2"


async def test_expire_idle_sweeps_only_idle_attempts(store: Store) -> None:
    await store.quiz_attempts.start(attempt("a1", idle_timeout_s=60), now=T0)
    await store.quiz_attempts.start(attempt("b1", user="U2", idle_timeout_s=3600), now=T0)
    assert await store.quiz_attempts.expire_idle(now=T0 + timedelta(minutes=5)) == ["a1"]
    assert (await store.quiz_attempts.get("a1")).status == "expired"  # type: ignore[union-attr]
    assert (await store.quiz_attempts.get("b1")).status == "active"  # type: ignore[union-attr]
    assert await store.quiz_attempts.expire_idle(now=T0 + timedelta(minutes=5)) == []


async def test_each_question_scores_once(store: Store) -> None:
    await store.quiz_attempts.start(attempt("a1"), now=T0)
    first = await store.quiz_attempts.record_answer("a1", 0, 2, correct=True, points=10, now=T0)
    assert (first.accepted, first.reason) == (True, "ok")
    assert first.attempt.answers[0].choice == 2
    again = await store.quiz_attempts.record_answer("a1", 0, 1, correct=True, points=10, now=T0)
    assert (again.accepted, again.reason) == (False, "already_answered")
    assert again.attempt.answers[0].choice == 2  # never overwritten
    assert (await store.scores.get("U1", WEEK)).points == 10  # type: ignore[union-attr]


async def test_concurrent_duplicate_answers_score_once(store: Store) -> None:
    await store.quiz_attempts.start(attempt("a1"), now=T0)
    answers = [
        store.quiz_attempts.record_answer("a1", 1, 0, correct=True, points=5, now=T0)
        for _ in range(10)
    ]
    results = await asyncio.gather(*answers)
    assert sum(r.accepted for r in results) == 1
    assert (await store.scores.get("U1", WEEK)).points == 5  # type: ignore[union-attr]


async def test_last_answer_finishes_the_attempt(store: Store) -> None:
    await store.quiz_attempts.start(attempt("a1", n=2), now=T0)
    await store.quiz_attempts.record_answer("a1", 1, 0, correct=True, points=10, now=T0)
    done = await store.quiz_attempts.record_answer("a1", 0, 0, correct=False, points=0, now=T0)
    assert done.accepted and done.attempt.status == "finished"
    assert sorted(done.attempt.answers) == [0, 1]
    assert await store.quiz_attempts.get_active_attempt("U1", now=T0) is None
    # A redelivered answer after the finish still reports it was already answered.
    late = await store.quiz_attempts.record_answer("a1", 1, 0, correct=True, points=10, now=T0)
    assert late.reason == "already_answered"
    assert (await store.scores.get("U1", WEEK)).points == 10  # type: ignore[union-attr]


async def test_answer_errors(store: Store) -> None:
    await store.quiz_attempts.start(attempt("a1"), now=T0)
    with pytest.raises(NotFoundError):
        await store.quiz_attempts.record_answer("ghost", 0, 0, correct=True, points=1)
    with pytest.raises(BadInputError):
        await store.quiz_attempts.record_answer("a1", 3, 0, correct=True, points=1, now=T0)
    with pytest.raises(BadInputError):
        await store.quiz_attempts.record_answer("a1", 0, -1, correct=True, points=1, now=T0)
    assert (await store.quiz_attempts.get("a1")).answers == {}  # type: ignore[union-attr]


async def test_finish_is_compare_and_set(store: Store) -> None:
    await store.quiz_attempts.start(attempt("a1"), now=T0)
    assert await store.quiz_attempts.finish("a1", now=T0) is True
    assert await store.quiz_attempts.finish("a1", status="expired", now=T0) is False
    assert (await store.quiz_attempts.get("a1")).status == "finished"  # type: ignore[union-attr]
    refused = await store.quiz_attempts.record_answer("a1", 0, 0, correct=True, points=3, now=T0)
    assert (refused.accepted, refused.reason) == (False, "not_active")
    with pytest.raises(BadInputError):
        await store.quiz_attempts.finish("a1", status="active")
    await store.quiz_attempts.start(attempt("w9", week="2026-W09"), now=T0)
    assert [a.id for a in await store.quiz_attempts.list_for_user("U1", week="2026-W09")] == ["w9"]


async def test_leaderboards_weekly_and_all_time(store: Store) -> None:
    for user, week, points in [
        ("ann", "2026-W10", 30), ("bob", "2026-W10", 50), ("cas", "2026-W10", 30),
        ("dee", "2026-W10", 10), ("ann", "2026-W09", 40), ("bob", "2026-W09", 5),
    ]:  # fmt: skip
        await store.scores.add_points(user, week, points)
    weekly = await store.scores.leaderboard(week="2026-W10")
    assert [(e.rank, e.user, e.points) for e in weekly] == [
        (1, "bob", 50), (2, "ann", 30), (2, "cas", 30), (4, "dee", 10),
    ]  # fmt: skip
    top2 = await store.scores.leaderboard(week="2026-W10", limit=2)
    assert [e.user for e in top2] == ["bob", "ann"]
    all_time = await store.scores.leaderboard()
    assert [(e.rank, e.user, e.points) for e in all_time] == [
        (1, "ann", 70), (2, "bob", 55), (3, "cas", 30), (4, "dee", 10),
    ]  # fmt: skip
    assert (await store.scores.add_points("dee", "2026-W10", 5)).points == 15
    assert await store.scores.leaderboard(week="2030-W01") == []
    with pytest.raises(BadInputError):
        await store.scores.add_points("ann", "week ten", 1)
