"""Handlers called directly (as a redelivery would): same attempt, scored once, clear errors."""

from __future__ import annotations

import random

import pytest

from services.quiz.attempts import QuizConfig, load_question
from services.quiz.handlers import QuizHandlers
from shared.bus import Event, QuizAnswered, QuizReady, QuizRequested, QuizScored
from shared.llm import LLMHttpError, LLMRuntime
from shared.store import Store
from tests.fakes.anthropic_server import FakeAnthropic, error_reply, overloaded
from tests.services.quiz.helpers import WEEK, Clock, seed

REPLY = {"channel": "D1", "thread_ts": "1.2"}


class Outbox:
    """Collects what a handler publishes."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    async def __call__(self, event: Event) -> None:
        self.events.append(event)


@pytest.fixture
def outbox() -> Outbox:
    return Outbox()


@pytest.fixture
def handlers(store: Store, outbox: Outbox) -> QuizHandlers:
    config = QuizConfig(clock=Clock(), rng=random.Random(1))
    return QuizHandlers(store=store, publish=outbox, config=config)


async def test_redelivered_request_gives_the_same_attempt_and_event_id(
    store: Store, offline_quiz: LLMRuntime, handlers: QuizHandlers, outbox: Outbox
) -> None:
    await seed(store)
    request = QuizRequested(actor="gateway", user_id="U1", week=WEEK, reply_to=REPLY)
    await handlers.on_requested(request)
    await handlers.on_requested(request)  # redelivery

    first, second = outbox.events
    assert isinstance(first, QuizReady) and isinstance(second, QuizReady)
    assert first.ok and first.attempt_id and first.question is not None
    # The same derived event id (JetStream drops the re-publish) and the same content.
    assert first.model_dump(exclude={"occurred_at"}) == second.model_dump(exclude={"occurred_at"})
    assert first.correlation_id == request.correlation_id and first.reply_to == REPLY
    assert len(await store.quiz_attempts.list_for_user("U1")) == 1


async def test_redelivered_answer_is_scored_once(
    store: Store, offline_quiz: LLMRuntime, handlers: QuizHandlers, outbox: Outbox
) -> None:
    await seed(store)
    await handlers.on_requested(
        QuizRequested(actor="gateway", user_id="U1", week=WEEK, reply_to=REPLY)
    )
    ready = outbox.events[0]
    assert isinstance(ready, QuizReady) and ready.attempt_id
    attempt = await store.quiz_attempts.get(ready.attempt_id)
    assert attempt is not None
    question, _, _ = await load_question(store, attempt, 0)
    answer = QuizAnswered(
        actor="gateway", attempt_id=ready.attempt_id, user_id="U1", question_index=0,
        choice_index=question.correct_index, reply_to=REPLY,
    )  # fmt: skip
    await handlers.on_answered(answer)
    await handlers.on_answered(answer)

    scored = [e for e in outbox.events if isinstance(e, QuizScored)]
    assert [s.duplicate for s in scored] == [False, True]
    assert scored[0].event_id == scored[1].event_id
    assert all(s.correct and s.score == 1 and s.question_count == 10 for s in scored)
    assert scored[0].correct_index == question.correct_index
    assert scored[0].explanation == question.explanation
    assert scored[0].next_question is not None and scored[0].next_question["index"] == 1
    assert (await store.scores.get("U1", WEEK)).points == 1  # type: ignore[union-attr]


async def test_no_topics_gives_a_failed_quiz_ready(
    store: Store, offline_quiz: LLMRuntime, handlers: QuizHandlers, outbox: Outbox
) -> None:
    await handlers.on_requested(
        QuizRequested(actor="gateway", user_id="U1", week=WEEK, reply_to=REPLY)
    )
    (ready,) = outbox.events
    assert isinstance(ready, QuizReady)
    assert not ready.ok and ready.attempt_id is None and ready.question is None
    assert ready.error is not None and "geen onderwerpen" in ready.error


async def test_answer_for_an_unknown_attempt_is_refused_with_an_error(
    store: Store, handlers: QuizHandlers, outbox: Outbox
) -> None:
    answer = QuizAnswered(
        actor="gateway", attempt_id="quiz-2026-W48-missing", user_id="U1", question_index=0,
        choice_index=0, reply_to=REPLY,
    )  # fmt: skip
    await handlers.on_answered(answer)  # acked: the user is told, nothing is retried
    [scored] = outbox.events
    assert isinstance(scored, QuizScored)
    assert scored.error is not None and "does not exist" in scored.error
    assert scored.finished and not scored.correct
    assert await store.scores.leaderboard(week=None) == []


async def test_model_overload_without_banks_is_retried_later(
    store: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime, handlers: QuizHandlers,
    outbox: Outbox,
) -> None:  # fmt: skip
    await seed(store)
    fake_anthropic.default = lambda _body: overloaded()
    request = QuizRequested(actor="gateway", user_id="U1", week=WEEK, reply_to=REPLY)
    with pytest.raises(LLMHttpError) as caught:
        await handlers.on_requested(request)
    assert caught.value.transient  # the consumer nacks it: redelivered with backoff
    assert outbox.events == []
    assert await store.quiz_attempts.list_for_user("U1") == []


async def test_permanent_model_failure_without_banks_tells_the_user(
    store: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime, handlers: QuizHandlers,
    outbox: Outbox,
) -> None:  # fmt: skip
    await seed(store)
    fake_anthropic.default = lambda _body: error_reply(400, "invalid_request_error", "too long")
    await handlers.on_requested(
        QuizRequested(actor="gateway", user_id="U1", week=WEEK, reply_to=REPLY)
    )
    (ready,) = outbox.events
    assert isinstance(ready, QuizReady) and not ready.ok
    assert ready.error is not None and "geen quizvragen beschikbaar" in ready.error
    assert "too long" in ready.error
    # Bounded: at most max_generations calls for one request.
    assert len(fake_anthropic.requests) == handlers.config.max_generations
