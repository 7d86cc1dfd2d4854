"""rpc.quiz.stop: a user abandons the running quiz; the quiz service ends the attempt."""

from __future__ import annotations

from datetime import datetime

from services.quiz.ports import QuizStore
from shared.bus.quiz_rpc import QuizStopReply, QuizStopRequest


async def answer_stop(
    request: QuizStopRequest, *, store: QuizStore, now: datetime | None = None
) -> QuizStopReply:
    """End the user's active attempt; answered questions keep their points."""
    attempt = await store.quiz_attempts.get_active_attempt(request.user_id, now=now)
    if attempt is None:
        return QuizStopReply(stopped=False)
    # Compare-and-set from active: an answer landing at the same moment still counts.
    ended = await store.quiz_attempts.finish(attempt.id, status="expired", now=now)
    return QuizStopReply(stopped=ended, attempt_id=attempt.id if ended else None)
