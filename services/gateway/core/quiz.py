"""The weekly quiz: start, answer, whether one is running, rankings; the question view."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from services.gateway.core.audit import audit
from services.gateway.core.context import CoreContext, new_request_id
from services.gateway.core.models import Leaderboards
from services.gateway.core.week import QUIZ_RPC_TIMEOUT_S, leaderboards
from shared.bus import QuizAnswered, QuizRequested, derived_event_id, request
from shared.bus.quiz_rpc import (
    QUIZ_BANK_SUBJECT,
    QUIZ_STOP_SUBJECT,
    BankRegenerateReply,
    BankRegenerateRequest,
    QuizStopReply,
    QuizStopRequest,
)
from shared.errors import BadInputError
from shared.store import AuditSurface, QuizAttempt, iso_week

LETTERS = "ABCDEFGH"
BANK_TIMEOUT_S = 600.0  # one model call for a batch, with its retries


@dataclass(frozen=True)
class QuestionView:
    """A quiz question as the surfaces show it (parsed from the quiz service's dict)."""

    index: int
    count: int
    text: str
    options: tuple[str, ...]


def parse_question(data: dict[str, Any] | None, *, count: int | None = None) -> QuestionView:
    """Read a question dict from quiz.ready / quiz.scored; BadInputError when unusable."""
    if not isinstance(data, dict):
        raise BadInputError("the quiz event carries no question")
    text = data.get("text") or data.get("question")
    options = data.get("options") or data.get("choices")
    index = data.get("index", data.get("question_index", 0))
    total = data.get("count", data.get("question_count", data.get("total", count)))
    if not isinstance(text, str) or not text.strip():
        raise BadInputError("quiz question without text")
    if not isinstance(options, list) or not 2 <= len(options) <= len(LETTERS):
        raise BadInputError("quiz question needs 2-8 options")
    if not isinstance(index, int) or index < 0:
        raise BadInputError("quiz question index must be a non-negative integer")
    if not isinstance(total, int) or total <= index:
        total = index + 1 if count is None else max(count, index + 1)
    return QuestionView(index, total, text.strip(), tuple(str(o) for o in options))


def progress(index: int, count: int) -> str:
    """'vraag 3/10'."""
    return f"vraag {index + 1}/{count}"


class QuizCalls:
    """Quiz requests, answers and rankings over the bus."""

    def __init__(self, ctx: CoreContext) -> None:
        self.ctx = ctx

    async def attempt(self, attempt_id: str) -> QuizAttempt | None:
        """One attempt as stored (answers recorded so far, status)."""
        return await self.ctx.store.quiz_attempts.get(attempt_id)

    async def stop(self, *, user_id: str) -> bool:
        """Abandon the user's running quiz (False when none runs); its answers stay scored."""
        reply = await request(
            self.ctx.broker, QUIZ_STOP_SUBJECT, QuizStopRequest(user_id=user_id),
            response_model=QuizStopReply, timeout=QUIZ_RPC_TIMEOUT_S, namespace=self.ctx.namespace,
        )  # fmt: skip
        return reply.stopped

    async def regenerate_bank(
        self, *, user_id: str, topic_id: str, surface: AuditSurface
    ) -> BankRegenerateReply:
        """Replace a topic's quiz bank (admins only: checked here and by the quiz service).

        Every attempt is audited: a refusal, a batch the quality gate rejected, a new bank.
        """
        ctx = self.ctx
        if not ctx.is_admin(user_id):
            await audit(ctx, actor=user_id, action="quiz.bank_regenerate", target=topic_id,
                        allowed=False, surface=surface, after={"outcome": "refused"})  # fmt: skip
            return BankRegenerateReply(status="forbidden")
        try:
            req = BankRegenerateRequest(user_id=user_id, topic_id=topic_id)
        except ValueError:
            raise BadInputError("dit onderwerp is ongeldig") from None
        reply = await request(
            ctx.broker, QUIZ_BANK_SUBJECT, req, response_model=BankRegenerateReply,
            timeout=BANK_TIMEOUT_S, namespace=ctx.namespace,
        )  # fmt: skip
        await audit(ctx, actor=user_id, action="quiz.bank_regenerate", target=topic_id,
                    allowed=reply.status != "forbidden", surface=surface,
                    after=reply.model_dump())  # fmt: skip
        return reply

    async def start(self, *, user_id: str, reply_to: dict[str, Any]) -> QuizRequested:
        """Ask for this week's quiz; quiz.ready brings the first question."""
        event = QuizRequested(
            actor=user_id,
            user_id=user_id,
            week=iso_week(),
            reply_to={"request_id": new_request_id(), **reply_to},
        )
        await self.ctx.publish(event)
        return event

    async def answer(
        self,
        *,
        attempt_id: str,
        user_id: str,
        question_index: int,
        choice_index: int,
        reply_to: dict[str, Any],
    ) -> QuizAnswered:
        """Answer one question of the user's own attempt; quiz.scored answers later."""
        attempt = await self.ctx.store.quiz_attempts.get(attempt_id)
        if attempt is None or attempt.user != user_id:
            raise BadInputError("deze quiz is niet van jou")
        if attempt.status != "active":
            raise BadInputError("deze quiz is al afgelopen")
        event = QuizAnswered(
            # One event per question: a double click is dropped by JetStream's dedupe.
            event_id=derived_event_id(QuizAnswered.SUBJECT, attempt_id, str(question_index)),
            actor=user_id,
            attempt_id=attempt_id,
            user_id=user_id,
            question_index=question_index,
            choice_index=choice_index,
            reply_to={"request_id": new_request_id(), **reply_to},
        )
        await self.ctx.publish(event)
        return event

    async def leaderboards(self, *, limit: int = 10) -> Leaderboards:
        """Weekly and all-time rankings."""
        return await leaderboards(self.ctx, limit=limit)
