"""Votes on R42's answers, stored with the turn they judge; the one module that knows where.

A turn (question, retrieved topic ids, answer, model, prompt version) is remembered when
its answer is shown; a vote copies it, so evals and the admins' gap list read one record.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from services.gateway.core.context import CoreContext
from shared.bus import ChatReply
from shared.errors import BadInputError

MAX_STORED_CHARS = 20_000
MAX_COMMENT_CHARS = 1000
TURN_KEY = "turn:{turn_id}"
VOTE_KEY = "feedback:{turn_id}:{user_id}"


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
        self, *, user_id: str, turn_id: str, positive: bool, where: str
    ) -> dict[str, Any]:
        """Store a vote with its turn; returns the stored record."""
        _check_turn_id(turn_id)
        turn = await self.ctx.store.settings.get(TURN_KEY.format(turn_id=turn_id)) or {}
        record = {
            "question": turn.get("question", ""),
            "topic_ids": turn.get("topic_ids", []),
            "answer": turn.get("answer", ""),
            "model": turn.get("model", ""),
            "prompt_version": turn.get("prompt_version", ""),
            "positive": positive,
            "user": user_id,
            "turn": turn_id,
            "where": where,
            "at": datetime.now(UTC).isoformat(),
        }
        await self.ctx.store.settings.set(VOTE_KEY.format(turn_id=turn_id, user_id=user_id), record)
        return record

    async def explain(self, *, user_id: str, turn_id: str, comment: str) -> None:
        """Add what was wrong to the user's 👎 on a turn (ignored without that vote)."""
        _check_turn_id(turn_id)
        key = VOTE_KEY.format(turn_id=turn_id, user_id=user_id)
        text = comment.strip()[:MAX_COMMENT_CHARS]

        def add(current: dict[str, Any] | None) -> dict[str, Any]:
            if not current:
                raise BadInputError("er is geen stem om toe te lichten")
            return {**current, "comment": text}

        await self.ctx.store.settings.update(key, add)
