"""rpc.quiz.status, .leaderboard and .stop: the quiz service answers what every surface shows."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from services.quiz.app import build
from services.quiz.attempts import QuizConfig, on_demand_generator, start_quiz
from shared.bus import build_broker, request
from shared.bus.quiz_rpc import (
    LEADERBOARD_SUBJECT,
    QUIZ_STATUS_SUBJECT,
    QUIZ_STOP_SUBJECT,
    LeaderboardReply,
    LeaderboardRequest,
    QuizStatusReply,
    QuizStatusRequest,
    QuizStopReply,
    QuizStopRequest,
)
from shared.config import build_settings
from shared.errors import BusError
from shared.runtime.service import ServiceContext, start_service, stop_service
from tests.services.quiz.helpers import WEEK, seed


@pytest.fixture
async def quiz(nats_url: str, unique: str, tmp_path: Path) -> AsyncIterator[ServiceContext]:
    settings = build_settings(nats_url=nats_url, store=f"sqlite:///{tmp_path}/q.db",
                              llm="offline", limiter="off")  # fmt: skip
    ctx = await start_service("quiz", build=build, settings=settings, namespace=f"w{unique}")
    try:
        yield ctx
    finally:
        await stop_service(ctx)


async def ask(ctx: ServiceContext, subject: str, payload, model):  # type: ignore[no-untyped-def]
    client = build_broker(ctx.nats_url, name="test-surface")
    await client.connect()
    try:
        return await request(client, subject, payload, response_model=model,
                             namespace=ctx.namespace, timeout=10)  # fmt: skip
    finally:
        await client.stop()


async def test_status_gives_the_curriculum_topic_and_the_quiz_flag(quiz: ServiceContext) -> None:
    await seed(quiz.store)
    await quiz.store.curriculum.set(WEEK, "declaraties")
    before = await ask(quiz, QUIZ_STATUS_SUBJECT, QuizStatusRequest(user_id="U1", week=WEEK),
                       QuizStatusReply)  # fmt: skip
    assert before == QuizStatusReply(
        week=WEEK, quiz_active=False, topic_id="declaraties", topic_label="Declaraties"
    )
    config = QuizConfig(size=2)
    await start_quiz(store=quiz.store, user_id="U1", week=WEEK, config=config,
                     generate=on_demand_generator(quiz.store, config))  # fmt: skip
    after = await ask(quiz, QUIZ_STATUS_SUBJECT, QuizStatusRequest(user_id="U1", week=WEEK),
                      QuizStatusReply)  # fmt: skip
    assert after.quiz_active and after.topic_id == "declaraties"


async def test_stop_ends_only_the_users_running_quiz_once(quiz: ServiceContext) -> None:
    await seed(quiz.store)
    config = QuizConfig(size=2)
    for user in ("U1", "U2"):
        await start_quiz(store=quiz.store, user_id=user, week=WEEK, config=config,
                         generate=on_demand_generator(quiz.store, config))  # fmt: skip
    stop = QuizStopRequest(user_id="U1")
    first = await ask(quiz, QUIZ_STOP_SUBJECT, stop, QuizStopReply)
    assert first.stopped and first.attempt_id is not None
    ended = await quiz.store.quiz_attempts.get(first.attempt_id)
    assert ended is not None and ended.status == "expired" and ended.user == "U1"
    assert await ask(quiz, QUIZ_STOP_SUBJECT, stop, QuizStopReply) == QuizStopReply(stopped=False)
    assert await quiz.store.quiz_attempts.get_active_attempt("U2") is not None  # untouched


async def test_status_of_an_empty_graph_has_no_topic(quiz: ServiceContext) -> None:
    reply = await ask(quiz, QUIZ_STATUS_SUBJECT, QuizStatusRequest(user_id="U1", week=WEEK),
                      QuizStatusReply)  # fmt: skip
    assert reply.topic_id is None and reply.topic_label == "" and not reply.quiz_active


async def test_leaderboard_ranks_the_week_and_all_time(quiz: ServiceContext) -> None:
    await quiz.store.scores.add_points("U1", WEEK, 3)
    await quiz.store.scores.add_points("U2", WEEK, 5)
    await quiz.store.scores.add_points("U1", "2026-W01", 10)
    reply = await ask(quiz, LEADERBOARD_SUBJECT, LeaderboardRequest(week=WEEK, limit=5),
                      LeaderboardReply)  # fmt: skip
    assert [(r.user, r.points, r.rank) for r in reply.weekly] == [("U2", 5, 1), ("U1", 3, 2)]
    assert [(r.user, r.points) for r in reply.all_time] == [("U1", 13), ("U2", 5)]


async def test_a_bad_week_is_refused_before_the_service(quiz: ServiceContext) -> None:
    with pytest.raises(ValueError):
        QuizStatusRequest(user_id="U1", week="2026-48")
    client = build_broker(quiz.nats_url, name="test-surface")
    await client.connect()
    try:
        # A raw request with a bad week gets an error reply, not a crash of the service.
        raw = await client.connection.request(
            f"{quiz.namespace}.{QUIZ_STATUS_SUBJECT}", b'{"user_id": "U1", "week": "x"}',
            timeout=10,
        )  # fmt: skip
        assert b"week" in raw.data
    finally:
        await client.stop()
    with pytest.raises(BusError):
        await ask(quiz, "rpc.quiz.nothing", LeaderboardRequest(), LeaderboardReply)
