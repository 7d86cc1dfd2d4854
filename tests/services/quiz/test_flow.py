"""The quiz service over the real bus: requested → ready → answered ×10 → scored, leaderboard."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

import nats
import pytest
from faststream.nats import NatsBroker

from services.quiz.app import build
from services.quiz.attempts import QuizConfig, load_question
from shared.bus import (
    STREAMS,
    QuizAnswered,
    QuizReady,
    QuizRequested,
    QuizScored,
    build_broker,
    new_event_id,
    ns_stream,
    ns_subject,
    publish_event,
)
from shared.config import build_settings
from shared.runtime.service import ServiceContext, start_service, stop_service
from tests.services.quiz.helpers import WEEK, Clock, seed

WAIT = 20.0
REPLY = {"channel": "D42"}


class Bus:
    """The gateway's side: publishes requests, collects what the quiz service answers."""

    def __init__(self, ctx: ServiceContext, broker: NatsBroker, nc: Any) -> None:
        self.ctx, self.broker, self.nc = ctx, broker, nc
        self.queues: dict[str, asyncio.Queue[dict[str, Any]]] = {}

    async def listen(self, subject: str) -> None:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.queues[subject] = queue

        async def on_msg(msg: Any) -> None:
            await queue.put(json.loads(msg.data))

        await self.nc.subscribe(ns_subject(subject, self.ctx.namespace), cb=on_msg)

    async def next(self, subject: str) -> dict[str, Any]:
        return await asyncio.wait_for(self.queues[subject].get(), WAIT)

    async def send(self, event: Any) -> None:
        await publish_event(self.broker, event, namespace=self.ctx.namespace)


@pytest.fixture
async def bus(nats_url: str, unique: str, tmp_path: Path) -> AsyncIterator[Bus]:
    settings = build_settings(
        nats_url=nats_url, store=f"sqlite:///{tmp_path}/quiz.db", llm="offline", limiter="off"
    )
    config = QuizConfig(clock=Clock(), rng=random.Random(9))
    ctx = await start_service(
        "quiz", build=partial(build, config=config), settings=settings, namespace=f"q{unique}"
    )
    broker = build_broker(nats_url, name=f"test-gateway-{unique}")
    await broker.connect()
    nc = await nats.connect(nats_url)
    harness = Bus(ctx, broker, nc)
    for subject in ("quiz.ready", "quiz.scored", "failed.quiz.answered"):
        await harness.listen(subject)
    try:
        yield harness
    finally:
        await broker.stop()
        await stop_service(ctx)
        js = nc.jetstream()
        for spec in STREAMS:
            with contextlib.suppress(Exception):
                await js.delete_stream(ns_stream(spec.name, ctx.namespace))
        await nc.close()


async def test_weekly_quiz_flow_over_the_bus(bus: Bus) -> None:
    store = bus.ctx.store
    await seed(store)
    request = QuizRequested(actor="gateway", user_id="U1", week=WEEK, reply_to=REPLY)
    await bus.send(request)
    ready = QuizReady.model_validate(await bus.next("quiz.ready"))
    assert ready.ok and ready.attempt_id and ready.reply_to == REPLY
    assert ready.correlation_id == request.correlation_id
    assert ready.question is not None
    assert ready.question["index"] == 0 and ready.question["count"] == 10
    assert {"text", "options", "difficulty", "topic_label"} <= set(ready.question)

    # The user asks again (a new request): the same attempt comes back.
    await bus.send(QuizRequested(actor="gateway", user_id="U1", week=WEEK, reply_to=REPLY))
    again = QuizReady.model_validate(await bus.next("quiz.ready"))
    assert again.attempt_id == ready.attempt_id and again.question == ready.question

    attempt = await store.quiz_attempts.get(ready.attempt_id)
    assert attempt is not None
    assert await store.quiz_attempts.get_active_attempt("U1", now=Clock()()) is not None
    expected_score = 0
    last: QuizScored | None = None
    for index in range(10):
        question, _, _ = await load_question(store, attempt, index)
        right = index % 3 != 0
        expected_score += right
        choice = question.correct_index if right else (question.correct_index + 1) % 4
        answer = QuizAnswered(
            actor="gateway", attempt_id=attempt.id, user_id="U1", question_index=index,
            choice_index=choice, reply_to=REPLY,
        )  # fmt: skip
        await bus.send(answer)
        if index == 0:  # a double click: a second event for the same question
            await bus.send(answer.model_copy(update={"event_id": new_event_id()}))
        batch = [QuizScored.model_validate(await bus.next("quiz.scored"))]
        if index == 0:
            batch.append(QuizScored.model_validate(await bus.next("quiz.scored")))
            assert sorted(s.duplicate for s in batch) == [False, True]
        for scored in batch:
            assert scored.question_index == index and scored.correct == right
            assert scored.correct_index == question.correct_index
            assert scored.explanation == question.explanation
            assert scored.score == expected_score
        last = batch[-1]
        if index < 9:
            assert not last.finished and last.next_question is not None
            assert last.next_question["index"] == index + 1
    assert last is not None and last.finished and last.next_question is None
    assert last.score == expected_score == 6

    weekly = await store.scores.leaderboard(week=WEEK)
    assert [(e.user, e.points) for e in weekly] == [("U1", 6)]
    assert [(e.user, e.points) for e in await store.scores.leaderboard()] == [("U1", 6)]
    assert await store.quiz_attempts.get_active_attempt("U1", now=Clock()()) is None

    # A finished week: quiz.ready says so instead of starting over.
    await bus.send(QuizRequested(actor="gateway", user_id="U1", week=WEEK, reply_to=REPLY))
    done = QuizReady.model_validate(await bus.next("quiz.ready"))
    assert not done.ok and done.error is not None and "score 6/10" in done.error


async def test_answer_for_an_unknown_attempt_is_answered_with_an_error(bus: Bus) -> None:
    answer = QuizAnswered(
        actor="gateway", attempt_id="quiz-2026-W48-unknown", user_id="U1", question_index=0,
        choice_index=1, reply_to=REPLY,
    )  # fmt: skip
    await bus.send(answer)
    scored = await bus.next("quiz.scored")
    assert scored["attempt_id"] == answer.attempt_id
    assert "does not exist" in scored["error"]
    assert scored["finished"] is True and scored["correct"] is False
    assert scored["reply_to"] == REPLY
