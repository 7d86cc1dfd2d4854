"""Votes on R42's answers, stored with the turn they judge (the store's feedback repository).

A turn (question, retrieved topic ids, answer, model, prompt version) is remembered when
its answer is shown; a vote copies it, so evals and the admins' gap list read one record.
Turns have no repository of their own yet: they are the one settings row this module keeps.
"""

from __future__ import annotations

from datetime import UTC, datetime

from services.gateway.core.context import CoreContext
from shared.bus import ChatReply
from shared.errors import BadInputError
from shared.store import FeedbackVote

MAX_STORED_CHARS = 20_000
MAX_COMMENT_CHARS = 1000
TURN_KEY = "turn:{turn_id}"


def _check_turn_id(turn_id: str) -> None:
    if not turn_id or len(turn_id) > 200:
        raise BadInputError("feedback without a valid answer reference")


class FeedbackCalls:
    """Turns and votes (one per user per answer; the last vote counts)."""

    def __init__(self, ctx: CoreContext) -> None:
        self.ctx = ctx

    async def record_turn(
        self, *, turn_id: str, user_id: str, question: str, reply: ChatReply
    ) -> None:
        """Remember what an answer was made of, for the votes it may get."""
        _check_turn_id(turn_id)
        await self.ctx.store.settings.set(
            TURN_KEY.format(turn_id=turn_id),
            {
                "user": user_id,
                "question": question[:MAX_STORED_CHARS],
                "topic_ids": [s.id for s in reply.sources],
                "answer": reply.text[:MAX_STORED_CHARS],
                "model": reply.model,
                "prompt_version": reply.prompt_version,
                "at": datetime.now(UTC).isoformat(),
            },
        )

    async def vote(
        self, *, user_id: str, turn_id: str, positive: bool, where: str, conversation: str = ""
    ) -> FeedbackVote:
        """Store a vote with its turn (the user's last vote on a turn counts)."""
        _check_turn_id(turn_id)
        turn = await self.ctx.store.settings.get(TURN_KEY.format(turn_id=turn_id)) or {}
        vote = FeedbackVote(
            turn_id=turn_id,
            user=user_id,
            value="up" if positive else "down",
            question=str(turn.get("question", "")),
            topic_ids=[str(t) for t in turn.get("topic_ids", [])],
            answer=str(turn.get("answer", "")),
            model=turn.get("model") or None,
            prompt_version=turn.get("prompt_version") or None,
            conversation=conversation or None,
            surface=where or None,
        )
        return await self.ctx.store.feedback.record(vote)

    async def explain(self, *, user_id: str, turn_id: str, comment: str) -> FeedbackVote:
        """Add what was wrong to the user's vote on a turn."""
        _check_turn_id(turn_id)
        vote = await self.ctx.store.feedback.get(turn_id, user_id)
        if vote is None:
            raise BadInputError("er is geen stem om toe te lichten")
        reason = comment.strip()[:MAX_COMMENT_CHARS] or None
        return await self.ctx.store.feedback.record(vote.model_copy(update={"reason": reason}))
