"""Votes on R42's answers, stored with the turn they judge (the store's feedback repository).

A turn (question, retrieved topic ids, answer, model, prompt version) is remembered when
its answer is shown (the store's turns repository, until it expires); a vote copies it, so
evals and the admins' gap list read one record.
"""

from __future__ import annotations

from services.gateway.core.context import CoreContext
from shared.bus import ChatReply
from shared.errors import BadInputError
from shared.store import ChatTurn, FeedbackVote, TurnContent

MAX_STORED_CHARS = 20_000
MAX_COMMENT_CHARS = 1000


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
        turn = ChatTurn(
            turn_id=turn_id,
            user=user_id,
            question=question[:MAX_STORED_CHARS],
            topic_ids=[s.id for s in reply.sources],
            answer=reply.text[:MAX_STORED_CHARS],
            model=reply.model,
            prompt_version=reply.prompt_version,
            kb_miss=reply.kb_miss,
        )
        await self.ctx.store.turns.put(turn)

    async def vote(
        self, *, user_id: str, turn_id: str, positive: bool, where: str, conversation: str = ""
    ) -> FeedbackVote:
        """Store a vote with its turn (the user's last vote on a turn counts)."""
        _check_turn_id(turn_id)
        turn = await self.ctx.store.turns.get(turn_id)
        content = turn.content() if turn else TurnContent()
        vote = FeedbackVote(
            turn_id=turn_id,
            user=user_id,
            value="up" if positive else "down",
            conversation=conversation or None,
            surface=where or None,
            **content.model_dump(),
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
