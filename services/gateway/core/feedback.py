"""👍 / 👎 on an answer; the one module that knows where votes are stored."""

from __future__ import annotations

from datetime import UTC, datetime

from services.gateway.core.context import CoreContext
from shared.errors import BadInputError


class FeedbackCalls:
    """Votes on R42's answers (one per user per answer; the last click counts)."""

    def __init__(self, ctx: CoreContext) -> None:
        self.ctx = ctx

    async def vote(self, *, user_id: str, turn_id: str, positive: bool, where: str) -> None:
        """Store a vote on an answer."""
        if not turn_id or len(turn_id) > 200:
            raise BadInputError("feedback without a valid answer reference")
        await self.ctx.store.settings.set(
            f"feedback:{turn_id}:{user_id}",
            {
                "positive": positive,
                "user": user_id,
                "turn": turn_id,
                "where": where,
                "at": datetime.now(UTC).isoformat(),
            },
        )
