"""Thin bus handlers: quiz.requested → quiz.ready, quiz.answered → quiz.scored."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from services.quiz.attempts import (
    QuizConfig,
    answer_question,
    on_demand_generator,
    start_quiz,
)
from services.quiz.ports import QuizStore
from services.quiz.selection import QuizUnavailableError
from shared.bus import (
    Event,
    QuizAnswered,
    QuizReady,
    QuizRequested,
    QuizScored,
    current_delivery,
    derived_event_id,
)
from shared.errors import PermanentError, R42Error, is_transient
from shared.kb.weekly import iso_week

log = logging.getLogger(__name__)

ACTOR = "quiz"
Publish = Callable[[Event], Awaitable[object]]


def _failed_ready(event: QuizRequested, error: str, attempt_id: str | None = None) -> QuizReady:
    return QuizReady.caused_by(
        event, actor=ACTOR, event_id=derived_event_id(QuizReady.SUBJECT, event.event_id),
        user_id=event.user_id, week=event.week, attempt_id=attempt_id, ok=False,
        error=error[:4000], reply_to=event.reply_to,
    )  # fmt: skip


def _refused_answer(event: QuizAnswered, error: str) -> QuizScored:
    return QuizScored.caused_by(
        event, actor=ACTOR, event_id=derived_event_id(QuizScored.SUBJECT, event.event_id),
        attempt_id=event.attempt_id, user_id=event.user_id, week=iso_week(datetime.now(UTC)),
        question_index=event.question_index, question_count=0, correct=False, correct_index=0,
        finished=True, error=error[:4000], reply_to=event.reply_to,
    )  # fmt: skip


@dataclass(frozen=True)
class QuizHandlers:
    """The quiz service's subscribers; `publish` sends an event to the bus."""

    store: QuizStore
    publish: Publish
    config: QuizConfig

    async def on_requested(self, event: QuizRequested) -> None:
        """Start (or resume) the user's weekly quiz and publish quiz.ready with question 1."""
        try:
            started = await start_quiz(
                store=self.store, user_id=event.user_id, week=event.week, config=self.config,
                generate=on_demand_generator(self.store, self.config),
            )  # fmt: skip
        except QuizUnavailableError as exc:
            await self.publish(_failed_ready(event, str(exc), exc.attempt_id))
            return
        except Exception as exc:
            delivery = current_delivery()
            if is_transient(exc) and (delivery is None or not delivery.last):
                raise  # nacked: redelivered with backoff
            # The user hears about it; an unexpected error still goes to the dead letters.
            await self.publish(_failed_ready(event, f"De quiz kon niet worden gestart: {exc}"))
            if isinstance(exc, R42Error):
                log.warning("quiz for %s (%s) not started: %s", event.user_id, event.week, exc)
                return
            raise
        attempt = started.attempt
        ready = QuizReady.caused_by(
            event, actor=ACTOR, event_id=derived_event_id(QuizReady.SUBJECT, event.event_id),
            user_id=event.user_id, week=attempt.week, attempt_id=attempt.id, ok=True,
            question=started.question, reply_to=event.reply_to,
        )  # fmt: skip
        await self.publish(ready)

    async def on_answered(self, event: QuizAnswered) -> None:
        """Score an answer once and publish quiz.scored (next question, or the final score).

        An unknown, foreign or closed attempt is answered with quiz.scored carrying `error`
        (the user sees why); nothing is scored.
        """
        try:
            outcome = await answer_question(
                store=self.store, attempt_id=event.attempt_id, user_id=event.user_id,
                question_index=event.question_index, choice=event.choice_index,
                config=self.config,
            )  # fmt: skip
        except PermanentError as exc:
            log.info("answer for %s refused: %s", event.attempt_id, exc)
            await self.publish(_refused_answer(event, str(exc)))
            return
        scored = QuizScored.caused_by(
            event, actor=ACTOR, event_id=derived_event_id(QuizScored.SUBJECT, event.event_id),
            attempt_id=event.attempt_id, user_id=event.user_id, week=outcome.attempt.week,
            question_index=outcome.question_index,
            question_count=len(outcome.attempt.question_keys), correct=outcome.correct,
            correct_index=outcome.correct_index, explanation=outcome.explanation,
            duplicate=outcome.duplicate, next_question=outcome.next_question,
            finished=outcome.finished, score=outcome.score, reply_to=event.reply_to,
        )  # fmt: skip
        await self.publish(scored)
