"""The quiz in Slack against a stand-in quiz service on the real bus: buttons, progress, score."""

from __future__ import annotations

import asyncio
import json

from services.gateway.slack import ids
from services.gateway.slack.blocks.kit import block_problems
from services.gateway.slack.listeners.quiz import QUIZ_ACK
from shared.bus import QuizAnswered, QuizReady, QuizRequested, QuizScored, publish_event
from shared.runtime.service import ServiceContext, Subscription
from shared.store import QuizAttempt
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.conftest import R42Stub, Tap
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
        self.got_answer = asyncio.Event()  # set at the first quiz.answered delivered
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
        self.got_answer.set()
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

    stub.ctx = await start_stub(
        "quiz",
        settings,
        namespace=gateway.namespace,
        subscriptions=[
            Subscription(QuizRequested, "quiz-req", stub.on_requested),
            Subscription(QuizAnswered, "quiz-ans", stub.on_answered),
        ],
    )
    gateway.others.append(stub.ctx)
    status, text = await gateway.command("/quiz")
    assert status == 200 and QUIZ_ACK in text
    first = (await fake_slack.wait_for("chat.update"))[0]
    assert first.args["channel"] == f"D{USER[1:]}"
    assert "Vraag 1/3" in json.dumps(first.args["blocks"])
    assert [b["action_id"] for b in buttons(first)] == [
        f"{ids.QUIZ_ANSWER_PREFIX}{i}" for i in range(4)
    ]

    # While the quiz runs a question gets one short notice and never reaches R42.
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
    notice = (
        await fake_slack.wait_for("chat.postMessage", where=lambda c: "quiz stop" in str(c.args))
    )[0]
    assert "Je quiz loopt nog" in json.dumps(notice.args["blocks"], ensure_ascii=False)

    def quiz_post(c) -> bool:
        return "quiz stop" not in str(c.args)

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
        if i == 0:  # the second click never claimed an answer that does not count
            claims = [
                json.dumps(c.args, ensure_ascii=False)
                for c in fake_slack.calls_to("chat.update")
                if c.args["ts"] == ts
            ]
            assert not any("Je koos A — even kijken" in c for c in claims), claims
        assert ("Goed!" in shown) == (pick == RIGHT)
        assert f"Vraag nummer {i + 1}?" in shown and "antwoord is B" in shown
        assert ids.QUIZ_ANSWER_PREFIX not in shown  # no buttons left on an answered question
        posts = await fake_slack.wait_for("chat.postMessage", 2 + i, where=quiz_post)
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

    ctx = await start_stub(
        "quiz",
        settings,
        namespace=gateway.namespace,
        subscriptions=[Subscription(QuizRequested, "quiz-req", refuse)],
    )
    gateway.others.append(ctx)
    await gateway.command("/quiz")
    update = (await fake_slack.wait_for("chat.update"))[0]
    assert "nog geen vragen" in json.dumps(update.args["blocks"])
    assert block_problems(update.args["blocks"]) == []
    retry = next(e for b in update.args["blocks"] if b["type"] == "actions" for e in b["elements"])
    assert retry["action_id"] == ids.QUIZ_START

    # Retry asks the quiz service again (a fresh request, so nothing dedupes it away).
    await gateway.action(ids.QUIZ_START, retry["value"], blocks=update.args["blocks"])
    again = (await fake_slack.wait_for("chat.update", 2))[1]
    assert "nog geen vragen" in json.dumps(again.args["blocks"])


async def test_quiz_stop_abandons_and_a_stale_click_shows_the_quiz_ended(
    gateway: Gateway, fake_slack: FakeSlack, r42_stub: R42Stub, tap: Tap
) -> None:
    store = gateway.ctx.store
    await store.quiz_attempts.start(
        QuizAttempt(id="att-stop", user=USER, week="2026-W48", question_keys=["q1", "q2"])
    )
    await gateway.command("/quiz", "stop")
    stopped = (await fake_slack.wait_for("respond"))[0]
    assert "gestopt" in json.dumps(stopped.args, ensure_ascii=False)
    attempt = await store.quiz_attempts.get("att-stop")
    assert attempt is not None and attempt.status != "active"
    await gateway.command("/quiz", "stop")
    again = (await fake_slack.wait_for("respond", 2))[1]
    assert "geen lopende quiz" in json.dumps(again.args, ensure_ascii=False)

    value = json.dumps({"a": "att-stop", "q": 0, "c": 1}, separators=(",", ":"))
    question = {"type": "section", "text": {"type": "mrkdwn", "text": "*Vraag 1/2*"}}
    await gateway.action(f"{ids.QUIZ_ANSWER_PREFIX}1", value, blocks=[question])
    update = (await fake_slack.wait_for("chat.update"))[0]
    assert "Deze quiz is afgelopen" in json.dumps(update.args, ensure_ascii=False)
    assert "even kijken" not in json.dumps(update.args, ensure_ascii=False)
    await gateway.settle()
    assert tap.of(QuizAnswered) == []  # nothing sent for an ended quiz


async def test_a_bad_quiz_argument_is_refused_in_the_ack(gateway: Gateway) -> None:
    status, body = await gateway.command("/quiz", "morgen")
    assert status == 200 and "/quiz stop" in body and "komt in je DM" not in body
