"""Weekly quiz attempts: start (idempotent), answer (scored once), expire, leaderboard."""

from __future__ import annotations

import hashlib
import logging
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from services.quiz.generation import GenerationResult, generate_questions
from services.quiz.ports import QuizStore
from services.quiz.selection import (
    Generate,
    QuizUnavailableError,
    select_questions,
    split_ref,
)
from shared.errors import BadInputError, NotFoundError, PermanentError
from shared.store import LeaderboardEntry, QuizAttempt, QuizQuestion, utcnow

log = logging.getLogger(__name__)

POINTS_PER_CORRECT = 1


@dataclass(frozen=True)
class QuizConfig:
    """Quiz knobs; tests inject the clock and the shuffle's random generator."""

    size: int = 10
    idle_timeout_s: float = 900.0
    max_generations: int = 3
    expire_interval_s: float = 30.0
    clock: Callable[[], datetime] = utcnow
    rng: random.Random = field(default_factory=random.Random)


class AttemptClosedError(PermanentError):
    """An answer arrived for an attempt that is finished or expired."""


@dataclass(frozen=True)
class QuizStart:
    """A started (or resumed) attempt and the question to show next."""

    attempt: QuizAttempt
    question: dict[str, Any]


@dataclass(frozen=True)
class AnswerOutcome:
    """The scoring of one answer: what quiz.scored carries."""

    attempt: QuizAttempt
    question_index: int
    correct: bool
    correct_index: int
    explanation: str
    duplicate: bool
    next_question: dict[str, Any] | None
    finished: bool
    score: int


def attempt_id_for(user_id: str, week: str) -> str:
    """One attempt per user per week: the id is derived, so a redelivered request finds it."""
    digest = hashlib.sha256(f"{user_id}\x1f{week}".encode()).hexdigest()[:24]
    return f"quiz-{week}-{digest}"


def score_of(attempt: QuizAttempt) -> int:
    """Points earned so far in an attempt."""
    return sum(a.points for a in attempt.answers.values())


def _is_open(attempt: QuizAttempt, now: datetime) -> bool:
    return attempt.status == "active" and (attempt.expires_at is None or attempt.expires_at > now)


def _closed_message(attempt: QuizAttempt, now: datetime) -> str:
    total = len(attempt.question_keys)
    state = "finished" if attempt.status == "finished" else "expired (idle too long)"
    return f"quiz attempt {attempt.id!r} is {state}; score {score_of(attempt)}/{total}"


async def load_question(
    store: QuizStore, attempt: QuizAttempt, index: int
) -> tuple[QuizQuestion, str, str]:
    """(question, topic id, topic label) for one position of an attempt."""
    topic_id, key = split_ref(attempt.question_keys[index])
    bank = await store.quiz_banks.get(topic_id)
    question = next((q for q in bank.questions if q.key == key), None) if bank else None
    if question is None:
        raise NotFoundError(
            f"question {index + 1} of attempt {attempt.id!r} is no longer in the {topic_id!r} bank"
        )
    topic = await store.topics.get(topic_id)
    return question, topic_id, topic.label if topic else topic_id


async def question_view(store: QuizStore, attempt: QuizAttempt, index: int) -> dict[str, Any]:
    """What the gateway shows: {index, count, text, options, difficulty, topic_id, topic_label}."""
    question, topic_id, label = await load_question(store, attempt, index)
    return {
        "index": index,
        "count": len(attempt.question_keys),
        "text": question.text,
        "options": list(question.options),
        "difficulty": question.difficulty,
        "topic_id": topic_id,
        "topic_label": label,
    }


def next_index(attempt: QuizAttempt) -> int | None:
    """The first unanswered question, or None when all are answered."""
    return next((i for i in range(len(attempt.question_keys)) if i not in attempt.answers), None)


async def start_quiz(
    *,
    store: QuizStore,
    user_id: str,
    week: str,
    config: QuizConfig,
    generate: Generate | None = None,
) -> QuizStart:
    """Start the user's quiz for a week, or resume the active one; the same request twice
    gives the same attempt. A finished or expired week raises QuizUnavailableError."""
    now = config.clock()
    active = await store.quiz_attempts.get_active_attempt(user_id, now=now)
    if active is None:
        attempt_id = attempt_id_for(user_id, week)
        existing = await store.quiz_attempts.get(attempt_id)
        if existing is not None and not _is_open(existing, now):
            # One attempt per week: an expired one is not restarted, or a user could look
            # answers up with R42 (silent while the quiz is active) and start over.
            score = f"score {score_of(existing)}/{len(existing.question_keys)}"
            if existing.status == "finished":
                message = f"Je hebt de quiz van week {week} al gedaan: {score}."
            else:
                message = f"Je quiz van week {week} is verlopen (te lang geen antwoord): {score}."
            raise QuizUnavailableError(message, attempt_id=attempt_id)
        if existing is None:
            topic_id, picked = await select_questions(
                store=store, user_id=user_id, week=week, size=config.size,
                generate=generate, max_generations=config.max_generations,
            )  # fmt: skip
            attempt = QuizAttempt(
                id=attempt_id, user=user_id, week=week, topic_id=topic_id,
                question_keys=[p.ref for p in picked], idle_timeout_s=config.idle_timeout_s,
            )  # fmt: skip
            # The store keeps one active attempt per user: a concurrent start wins, we resume it.
            active = await store.quiz_attempts.start(attempt, now=now)
        else:
            active = existing
    index = next_index(active)
    if index is None:  # cannot happen for an active attempt: the last answer finishes it
        raise PermanentError(f"quiz attempt {active.id!r} is active but fully answered")
    return QuizStart(attempt=active, question=await question_view(store, active, index))


def on_demand_generator(store: QuizStore, config: QuizConfig) -> Generate:
    """Generation of a topic's bank when a quiz needs more questions."""

    async def generate(topic_id: str) -> GenerationResult:
        return await generate_questions(
            store=store, topic_id=topic_id, count=config.size, rng=config.rng
        )

    return generate


async def answer_question(
    *,
    store: QuizStore,
    attempt_id: str,
    user_id: str,
    question_index: int,
    choice: int,
    config: QuizConfig,
) -> AnswerOutcome:
    """Score one answer once; a repeat is reported as duplicate without extra points."""
    attempt = await store.quiz_attempts.get(attempt_id)
    if attempt is None:
        raise NotFoundError(f"quiz attempt {attempt_id!r} does not exist")
    if attempt.user != user_id:
        raise BadInputError(f"quiz attempt {attempt_id!r} belongs to another user")
    count = len(attempt.question_keys)
    if not 0 <= question_index < count:
        raise BadInputError(
            f"question index {question_index} is out of range for attempt {attempt_id!r} "
            f"({count} questions)"
        )
    question, _, _ = await load_question(store, attempt, question_index)
    now = config.clock()
    if question_index not in attempt.answers:
        if not 0 <= choice < len(question.options):
            raise BadInputError(f"choice {choice} is out of range (0-{len(question.options) - 1})")
        if not _is_open(attempt, now):
            raise AttemptClosedError(_closed_message(attempt, now))
        correct = choice == question.correct_index
        result = await store.quiz_attempts.record_answer(
            attempt_id, question_index, choice, correct=correct,
            points=POINTS_PER_CORRECT if correct else 0, now=now,
        )  # fmt: skip
        if result.reason == "not_active":
            raise AttemptClosedError(_closed_message(result.attempt, now))
        attempt = result.attempt
        duplicate = not result.accepted
    else:
        duplicate = True
    recorded = attempt.answers[question_index]
    if duplicate:
        log.info("duplicate answer to question %d of %s ignored", question_index, attempt_id)
    upcoming = next_index(attempt)
    # "finished" tells the gateway the quiz is over: completed, or expired while idle.
    finished = upcoming is None or not _is_open(attempt, now)
    return AnswerOutcome(
        attempt=attempt,
        question_index=question_index,
        correct=recorded.correct,
        correct_index=question.correct_index,
        explanation=question.explanation,
        duplicate=duplicate,
        next_question=(
            None if finished or upcoming is None else await question_view(store, attempt, upcoming)
        ),
        finished=finished,
        score=score_of(attempt),
    )


async def quiz_active(*, store: QuizStore, user_id: str, now: datetime | None = None) -> bool:
    """The quiz-active flag: the user has an active attempt that has not idled out."""
    return await store.quiz_attempts.get_active_attempt(user_id, now=now) is not None


async def expire_idle_attempts(*, store: QuizStore, now: datetime | None = None) -> list[str]:
    """Mark idle attempts expired (clears their quiz-active flag); returns their ids."""
    expired = await store.quiz_attempts.expire_idle(now=now)
    if expired:
        log.info("expired %d idle quiz attempt(s)", len(expired))
    return expired


async def leaderboard(
    *, store: QuizStore, week: str | None = None, limit: int = 10
) -> list[LeaderboardEntry]:
    """Top users for a week, or all time when week is None."""
    if not 1 <= limit <= 1000:
        raise BadInputError(f"limit must be between 1 and 1000, got {limit}")
    return await store.scores.leaderboard(week=week, limit=limit)


__all__ = [
    "AnswerOutcome",
    "AttemptClosedError",
    "QuizConfig",
    "QuizStart",
    "QuizUnavailableError",
    "answer_question",
    "attempt_id_for",
    "expire_idle_attempts",
    "leaderboard",
    "on_demand_generator",
    "quiz_active",
    "start_quiz",
]
