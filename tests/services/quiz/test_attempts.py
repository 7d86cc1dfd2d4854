"""Attempts on a real SQLite store: start once, score once, the quiz-active flag, errors."""

from __future__ import annotations

import asyncio
import random
from collections import Counter

import pytest

from services.quiz.app import sweep_idle
from services.quiz.attempts import (
    AttemptClosedError,
    QuizConfig,
    answer_question,
    attempt_id_for,
    expire_idle_attempts,
    leaderboard,
    load_question,
    on_demand_generator,
    quiz_active,
    start_quiz,
)
from services.quiz.selection import QuizUnavailableError
from shared.errors import BadInputError, NotFoundError
from shared.llm import LLMRuntime
from shared.store import QuizAttempt, Store
from tests.services.quiz.helpers import WEEK, Clock, seed

WAIT = 10.0


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def config(clock: Clock) -> QuizConfig:
    return QuizConfig(idle_timeout_s=900, clock=clock, rng=random.Random(42))


@pytest.fixture
async def ready(store: Store, offline_quiz: LLMRuntime) -> Store:
    await seed(store)
    return store


async def start(store: Store, config: QuizConfig, user: str = "U1") -> QuizAttempt:
    started = await start_quiz(
        store=store, user_id=user, week=WEEK, config=config,
        generate=on_demand_generator(store, config),
    )  # fmt: skip
    return started.attempt


async def correct_choice(store: Store, attempt: QuizAttempt, index: int) -> int:
    question, _, _ = await load_question(store, attempt, index)
    return question.correct_index


async def test_start_generates_banks_and_is_idempotent(
    ready: Store, config: QuizConfig, clock: Clock
) -> None:
    first = await start_quiz(
        store=ready, user_id="U1", week=WEEK, config=config,
        generate=on_demand_generator(ready, config),
    )  # fmt: skip
    assert first.attempt.id == attempt_id_for("U1", WEEK)
    assert len(first.attempt.question_keys) == 10
    assert first.question["index"] == 0 and first.question["count"] == 10
    assert set(first.question) == {
        "index", "count", "text", "options", "difficulty", "topic_id", "topic_label"
    }  # fmt: skip
    assert len(first.question["options"]) == 4
    assert await quiz_active(store=ready, user_id="U1", now=clock())

    again = await start(ready, config)
    assert again.id == first.attempt.id and again.question_keys == first.attempt.question_keys
    assert len(await ready.quiz_attempts.list_for_user("U1")) == 1
    assert not any(k.startswith("salarisgeheim/") for k in again.question_keys)


async def test_double_answer_scores_once(ready: Store, config: QuizConfig) -> None:
    attempt = await start(ready, config)
    right = await correct_choice(ready, attempt, 0)
    wrong = (right + 1) % 4

    first = await answer_question(
        store=ready, attempt_id=attempt.id, user_id="U1", question_index=0, choice=right,
        config=config,
    )  # fmt: skip
    second = await answer_question(
        store=ready, attempt_id=attempt.id, user_id="U1", question_index=0, choice=wrong,
        config=config,
    )  # fmt: skip

    assert first.correct and not first.duplicate and first.score == 1
    assert second.duplicate and second.correct and second.score == 1  # the first answer counts
    assert second.next_question is not None and second.next_question["index"] == 1
    assert (await ready.scores.get("U1", WEEK)).points == 1  # type: ignore[union-attr]


async def test_full_quiz_finishes_clears_the_flag_and_feeds_both_leaderboards(
    ready: Store, config: QuizConfig, clock: Clock
) -> None:
    attempt = await start(ready, config)
    difficulties = Counter()
    outcome = None
    for index in range(10):
        question, _, _ = await load_question(ready, attempt, index)
        difficulties[question.difficulty] += 1
        choice = question.correct_index if index % 2 == 0 else (question.correct_index + 1) % 4
        outcome = await answer_question(
            store=ready, attempt_id=attempt.id, user_id="U1", question_index=index,
            choice=choice, config=config,
        )  # fmt: skip
        assert outcome.correct == (index % 2 == 0)
        assert outcome.finished == (index == 9)
    assert outcome is not None and outcome.next_question is None and outcome.score == 5
    assert difficulties == {"easy": 4, "medium": 4, "hard": 2}
    assert not await quiz_active(store=ready, user_id="U1", now=clock())

    weekly = await leaderboard(store=ready, week=WEEK)
    all_time = await leaderboard(store=ready)
    assert [(e.rank, e.user, e.points) for e in weekly] == [(1, "U1", 5)]
    assert [(e.user, e.points) for e in all_time] == [("U1", 5)]

    with pytest.raises(QuizUnavailableError, match="al gedaan: score 5/10"):
        await start(ready, config)
    # A double click on the last answer is a duplicate, not an error, and scores nothing.
    repeat = await answer_question(
        store=ready, attempt_id=attempt.id, user_id="U1", question_index=9, choice=0,
        config=config,
    )  # fmt: skip
    assert repeat.duplicate and repeat.finished and repeat.score == 5


async def test_idle_timeout_clears_the_flag_on_read_and_by_the_sweep(
    ready: Store, config: QuizConfig, clock: Clock
) -> None:
    attempt = await start(ready, config)
    clock.advance(600)
    await answer_question(
        store=ready, attempt_id=attempt.id, user_id="U1", question_index=0, choice=0,
        config=config,
    )  # fmt: skip
    clock.advance(600)  # 1200 s since start but only 600 s idle: still active
    assert await quiz_active(store=ready, user_id="U1", now=clock())

    clock.advance(301)
    assert not await quiz_active(store=ready, user_id="U1", now=clock())  # checked on read
    with pytest.raises(AttemptClosedError, match="expired"):
        await answer_question(
            store=ready, attempt_id=attempt.id, user_id="U1", question_index=1, choice=0,
            config=config,
        )  # fmt: skip
    assert await expire_idle_attempts(store=ready, now=clock()) == [attempt.id]
    stored = await ready.quiz_attempts.get(attempt.id)
    assert stored is not None and stored.status == "expired" and set(stored.answers) == {0}
    with pytest.raises(QuizUnavailableError, match="verlopen"):
        await start(ready, config)


async def test_the_service_sweeper_expires_idle_attempts(ready: Store, clock: Clock) -> None:
    config = QuizConfig(idle_timeout_s=60, clock=clock, expire_interval_s=0.01)
    attempt = await start(ready, config)

    async def status() -> str:
        stored = await ready.quiz_attempts.get(attempt.id)
        assert stored is not None
        return stored.status

    clock.advance(61)
    assert await status() == "active"  # nobody read it: only the sweeper can expire it
    sweeper = asyncio.create_task(sweep_idle(ready, config))
    try:
        async with asyncio.timeout(WAIT):
            while await status() != "expired":  # noqa: ASYNC110 - the store has no notifications
                await asyncio.sleep(0.01)
    finally:
        sweeper.cancel()


async def test_unknown_foreign_and_out_of_range_answers_are_refused(
    ready: Store, config: QuizConfig
) -> None:
    attempt = await start(ready, config)
    with pytest.raises(NotFoundError, match="quiz attempt 'nope' does not exist"):
        await answer_question(
            store=ready, attempt_id="nope", user_id="U1", question_index=0, choice=0,
            config=config,
        )  # fmt: skip
    with pytest.raises(BadInputError, match="belongs to another user"):
        await answer_question(
            store=ready, attempt_id=attempt.id, user_id="U2", question_index=0, choice=0,
            config=config,
        )  # fmt: skip
    with pytest.raises(BadInputError, match="question index 10 is out of range"):
        await answer_question(
            store=ready, attempt_id=attempt.id, user_id="U1", question_index=10, choice=0,
            config=config,
        )  # fmt: skip
    with pytest.raises(BadInputError, match="choice 4 is out of range"):
        await answer_question(
            store=ready, attempt_id=attempt.id, user_id="U1", question_index=0, choice=4,
            config=config,
        )  # fmt: skip
    assert await ready.scores.get("U1", WEEK) is None


async def test_answer_to_a_finished_attempt_is_a_clear_error(
    ready: Store, config: QuizConfig, clock: Clock
) -> None:
    attempt = await start(ready, config)
    assert await ready.quiz_attempts.finish(attempt.id, now=clock())
    with pytest.raises(AttemptClosedError, match=r"is finished; score 0/10"):
        await answer_question(
            store=ready, attempt_id=attempt.id, user_id="U1", question_index=3, choice=0,
            config=config,
        )  # fmt: skip
