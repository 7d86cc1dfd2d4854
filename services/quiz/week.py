"""The quiz service's read side: a user's week (topic, quiz-active flag) and leaderboards."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from services.quiz.attempts import leaderboard, quiz_active
from services.quiz.ports import QuizStore
from services.quiz.selection import topic_order
from shared.bus.quiz_rpc import (
    LeaderboardReply,
    LeaderboardRequest,
    LeaderboardRow,
    QuizStatusReply,
    QuizStatusRequest,
)
from shared.kb.weekly import iso_week
from shared.store import Topic


@dataclass(frozen=True)
class WeekTopic:
    """The topic a user learns and is quizzed on in an ISO week."""

    week: str
    topic: Topic | None


async def week_topic(*, store: QuizStore, user_id: str, week: str | None = None) -> WeekTopic:
    """The week's topic of a user: the curriculum's, else the stable weighted draw."""
    week = week or iso_week(datetime.now(UTC))
    order = topic_order(
        user_id=user_id, week=week, topics=await store.topics.list(),
        curriculum_topic=await store.curriculum.get(week),
    )  # fmt: skip
    return WeekTopic(week=week, topic=order[0] if order else None)


async def answer_status(request: QuizStatusRequest, *, store: QuizStore) -> QuizStatusReply:
    """rpc.quiz.status: the user's topic of the week and whether a quiz is running."""
    found = await week_topic(store=store, user_id=request.user_id, week=request.week)
    return QuizStatusReply(
        week=found.week, quiz_active=await quiz_active(store=store, user_id=request.user_id),
        topic_id=found.topic.id if found.topic else None,
        topic_label=found.topic.label if found.topic else "",
    )  # fmt: skip


async def answer_leaderboard(request: LeaderboardRequest, *, store: QuizStore) -> LeaderboardReply:
    """rpc.quiz.leaderboard: the week's and the all-time top."""
    week = request.week or iso_week(datetime.now(UTC))
    weekly = await leaderboard(store=store, week=week, limit=request.limit)
    all_time = await leaderboard(store=store, week=None, limit=request.limit)
    return LeaderboardReply(
        week=week,
        weekly=[LeaderboardRow(**e.model_dump()) for e in weekly],
        all_time=[LeaderboardRow(**e.model_dump()) for e in all_time],
    )
