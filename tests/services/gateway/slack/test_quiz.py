"""The quiz in Slack against a stand-in quiz service on the real bus: buttons, progress, score."""

from __future__ import annotations

import json

from services.gateway.slack import ids
from services.gateway.slack.listeners.quiz import QUIZ_ACK
from shared.bus import QuizAnswered, QuizReady, QuizRequested, QuizScored, publish_event
from shared.bus import subscribe_event as subscribe
from shared.runtime.service import ServiceContext
from shared.store import QuizAttempt
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.conftest import R42Stub
from tests.services.gateway.harness import USER, Gateway, start_stub

COUNT = 3
RIGHT = 1


def question(i: int) -> dict:
    return {
        "index": i,
        "count": COUNT,
        "text": f"Vraag nummer {i + 1}?",
        "options": ["Alfa", "Bravo", "Charlie", "Delta"],
    }


class QuizStub:
    """Answers quiz.requested / quiz.answered like the quiz service, keeping real attempts."""

    def __init__(self) -> None:
        self.answered: list[QuizAnswered] = []
        self.ctx: ServiceContext | None = None

    async def publish(self, event) -> None:
        assert self.ctx is not None
        await publish_event(self.ctx.broker, event, namespace=self.ctx.namespace)

    async def on_requested(self, event: QuizRequested) -> None:
        assert self.ctx is not None
        attempt = await self.ctx.store.quiz_attempts.start(
            QuizAttempt(
                id=f"att-{event.user_id}",
                user=event.user_id,
                week=event.week,
                question_keys=[f"q{i}" for i in range(COUNT)],
            )
        )
        await self.publish(
            QuizReady.caused_by(
                event,
                actor="quiz",
                user_id=event.user_id,
                week=event.week,
                attempt_id=attempt.id,
                ok=True,
                question=question(0),
                reply_to=event.reply_to,
            )
        )

    async def on_answered(self, event: QuizAnswered) -> None:
        assert self.ctx is not None
        self.answered.append(event)
        correct = event.choice_index == RIGHT
        result = await self.ctx.store.quiz_attempts.record_answer(
            event.attempt_id,
            event.question_index,
            event.choice_index,
            correct=correct,
            points=1 if correct else 0,
        )
        attempt = result.attempt
        nxt = event.question_index + 1
        await self.publish(
            QuizScored.caused_by(
                event,
                actor="quiz",
                attempt_id=attempt.id,
                user_id=event.user_id,
                week=attempt.week,
                question_index=event.question_index,
                question_count=COUNT,
                correct=correct,
                correct_index=RIGHT,
                explanation=f"Uitleg bij vraag {nxt}.",
                next_question=question(nxt) if nxt < COUNT else None,
                finished=nxt >= COUNT,
                score=sum(a.points for a in attempt.answers.values()),
                reply_to=event.reply_to,
            )
        )


def buttons(call) -> list[dict]:
    return [e for b in call.args["blocks"] if b["type"] == "actions" for e in b["elements"]]


async def test_quiz_one_question_at_a_time_to_the_final_score(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack, settings
) -> None:
    stub = QuizStub()

    async def register(ctx: ServiceContext) -> None:
        stub.ctx = ctx
        subscribe(
            ctx.broker,
            QuizRequested,
            durable="quiz-req",
            handler=stub.on_requested,
            namespace=ctx.namespace,
        )
        subscribe(
            ctx.broker,
            QuizAnswered,
            durable="quiz-ans",
            handler=stub.on_answered,
            namespace=ctx.namespace,
        )

    gateway.others.append(
        await start_stub("quiz", settings, namespace=gateway.namespace, register=register)
    )
    status, text = await gateway.command("/quiz")
    assert status == 200 and QUIZ_ACK in text
    first = (await fake_slack.wait_for("chat.update"))[0]
    assert first.args["channel"] == f"D{USER[1:]}"
    assert "Vraag 1/3" in json.dumps(first.args["blocks"])
    assert [b["action_id"] for b in buttons(first)] == [
        f"{ids.QUIZ_ANSWER_PREFIX}{i}" for i in range(4)
    ]

    # R42 stays silent while the quiz runs.
    dm = {
        "type": "message",
        "channel_type": "im",
        "channel": "DUSER1",
        "user": USER,
        "text": "Wat is het antwoord?",
        "ts": "1700000000.000900",
        "client_msg_id": "cm-q",
    }
    await gateway.event(dm, event_id="EvQ1")

    message, ts = first, first.args["ts"]
    for i, pick in enumerate([RIGHT, 0, RIGHT]):
        value = buttons(message)[pick]["value"]
        await gateway.action(
            buttons(message)[pick]["action_id"], value, message_ts=ts, blocks=message.args["blocks"]
        )
        if i == 0:  # a double click on the same question is dropped
            await gateway.action(
                buttons(message)[0]["action_id"],
                buttons(message)[0]["value"],
                message_ts=ts,
                blocks=message.args["blocks"],
            )
        verdict = (
            await fake_slack.wait_for(
                "chat.update",
                where=lambda c, t=ts: c.args["ts"] == t and "Uitleg" in json.dumps(c.args),
            )
        )[0]
        shown = json.dumps(verdict.args["blocks"])
        assert ("Goed!" in shown) == (pick == RIGHT)
        assert f"Vraag nummer {i + 1}?" in shown and "antwoord is B" in shown
        assert ids.QUIZ_ANSWER_PREFIX not in shown  # no buttons left on an answered question
        posts = await fake_slack.wait_for("chat.postMessage", 2 + i)
        message, ts = posts[-1], posts[-1].response["ts"]
        if i < COUNT - 1:
            assert f"Vraag {i + 2}/3" in json.dumps(message.args["blocks"])
    assert "Quiz afgerond" in json.dumps(message.args["blocks"])
    assert "*2* van de 3 vragen goed" in json.dumps(message.args["blocks"])
    await gateway.settle()
    assert [a.question_index for a in stub.answered] == [0, 1, 2]
    assert r42_stub.chats == []
    assert (await gateway.ctx.store.scores.leaderboard(limit=5))[0].points == 2


async def test_quiz_unavailable_is_explained(
    gateway: Gateway, fake_slack: FakeSlack, settings
) -> None:
    async def refuse(event: QuizRequested) -> None:
        await publish_event(
            ctx.broker,
            QuizReady.caused_by(
                event,
                actor="quiz",
                user_id=event.user_id,
                week=event.week,
                ok=False,
                error="Er zijn nog geen vragen voor dit onderwerp.",
                reply_to=event.reply_to,
            ),
            namespace=ctx.namespace,
        )

    async def register(c: ServiceContext) -> None:
        subscribe(
            c.broker, QuizRequested, durable="quiz-req", handler=refuse, namespace=c.namespace
        )

    ctx = await start_stub("quiz", settings, namespace=gateway.namespace, register=register)
    gateway.others.append(ctx)
    await gateway.command("/quiz")
    update = (await fake_slack.wait_for("chat.update"))[0]
    assert "nog geen vragen" in json.dumps(update.args["blocks"])
