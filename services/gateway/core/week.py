"""The quiz service's answers on a user's week and the rankings (rpc.quiz.*)."""

from __future__ import annotations

from services.gateway.core.context import CoreContext
from services.gateway.core.models import Leaderboards, WeeklyTopic
from shared.bus import request
from shared.bus.quiz_rpc import (
    LEADERBOARD_SUBJECT,
    QUIZ_STATUS_SUBJECT,
    LeaderboardReply,
    LeaderboardRequest,
    QuizStatusReply,
    QuizStatusRequest,
)
from shared.store import LeaderboardEntry

QUIZ_RPC_TIMEOUT_S = 15.0


async def quiz_status(
    ctx: CoreContext, *, user_id: str, week: str | None = None
) -> QuizStatusReply:
    """The user's topic of the week and whether a quiz is running, as the quiz service says."""
    return await request(
        ctx.broker,
        QUIZ_STATUS_SUBJECT,
        QuizStatusRequest(user_id=user_id, week=week),
        response_model=QuizStatusReply,
        timeout=QUIZ_RPC_TIMEOUT_S,
        namespace=ctx.namespace,
    )


def weekly_topic_of(status: QuizStatusReply) -> WeeklyTopic | None:
    """The week's topic in a status reply (None when the graph has none)."""
    if status.topic_id is None:
        return None
    return WeeklyTopic(
        week=status.week, topic_id=status.topic_id, label=status.topic_label or status.topic_id
    )


async def leaderboards(
    ctx: CoreContext, *, limit: int = 10, week: str | None = None
) -> Leaderboards:
    """The weekly and all-time top `limit`, as the quiz service ranks them."""
    reply = await request(
        ctx.broker,
        LEADERBOARD_SUBJECT,
        LeaderboardRequest(limit=limit, week=week),
        response_model=LeaderboardReply,
        timeout=QUIZ_RPC_TIMEOUT_S,
        namespace=ctx.namespace,
    )
    return Leaderboards(
        week=reply.week,
        weekly=[LeaderboardEntry(**row.model_dump()) for row in reply.weekly],
        all_time=[LeaderboardEntry(**row.model_dump()) for row in reply.all_time],
    )
