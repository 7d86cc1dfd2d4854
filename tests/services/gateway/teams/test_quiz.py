"""The quiz played through Adaptive Card clicks (adaptiveCard/action invokes) to the score."""

from __future__ import annotations

import asyncio

from shared.bus import (
    QuizAnswered,
    QuizRequested,
    jetstream,
    ns_stream,
    ns_subject,
    stream_for_subject,
)
from shared.config import build_settings
from shared.runtime.service import ServiceContext, Subscription
from shared.store import QuizAttempt
from tests.fakes.bot_connector import Recorded
from tests.services.gateway.conftest import R42Stub
from tests.services.gateway.harness import start_stub, stop_all
from tests.services.gateway.slack.test_quiz import COUNT, RIGHT, QuizStub
from tests.services.gateway.teams.activities import (
    USER_AAD,
    card_action,
    personal_conversation,
    personal_message,
)
from tests.services.gateway.teams.conftest import Teams

CONV = personal_conversation(USER_AAD)


def execute_actions(call: Recorded) -> list[dict]:
    """Every Action.Execute on the call's cards (in the body's ActionSets and the card actions)."""
    found: list[dict] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("type") == "Action.Execute":
                found.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(call.cards)
    return found


async def stored_count(teams: Teams, subject: str) -> int:
    """Messages JetStream holds on a subject of the test's namespace."""
    stream = ns_stream(stream_for_subject(subject).name, teams.namespace)
    info = await jetstream(teams.ctx.broker).stream_info(stream, subjects_filter=">")
    return (info.state.subjects or {}).get(ns_subject(subject, teams.namespace), 0)


async def start_quiz_service(teams: Teams) -> tuple[QuizStub, ServiceContext]:
    stub = QuizStub()

    stub.ctx = await start_stub(
        "quiz",
        build_settings(),
        namespace=teams.namespace,
        subscriptions=[
            Subscription(QuizRequested, "quiz-req", stub.on_requested),
            Subscription(QuizAnswered, "quiz-ans", stub.on_answered),
        ],
    )
    return stub, stub.ctx


async def test_quiz_played_through_card_actions(teams: Teams, r42: R42Stub) -> None:
    stub, quiz = await start_quiz_service(teams)
    try:
        url = teams.connector.url
        await teams.post(personal_message(url, "quiz"))
        placeholder = await teams.connector.wait_for(
            lambda c: c.method == "POST" and "klaargezet" in c.card_text, what="the placeholder"
        )
        first = await teams.connector.wait_for(
            lambda c: c.method == "PUT" and c.activity_id == placeholder.activity_id,
            what="question 1",
        )
        assert "Vraag 1/3" in first.card_text
        card_id = placeholder.activity_id
        for i in range(COUNT):
            question = (
                first
                if i == 0
                else await teams.connector.wait_for(
                    lambda c, i=i: (
                        c.method == "POST"
                        and f"Vraag {i + 1}/3" in c.card_text
                        and execute_actions(c)
                    ),
                    what=f"question {i + 1}",
                )
            )
            if i > 0:
                card_id = question.activity_id
            options = execute_actions(question)
            assert [o["verb"] for o in options] == ["quiz.answer"] * 4
            choice = RIGHT if i != 1 else 0  # one wrong answer
            status, body = await teams.post(
                card_action(url, "quiz.answer", options[choice]["data"], reply_to_id=card_id)
            )
            # The invoke answer locks the card at once: no buttons, the choice shown.
            assert status == 200 and body["statusCode"] == 200
            assert body["type"] == "application/vnd.microsoft.card.adaptive"
            assert "even kijken" in str(body["value"]) and "Action.Execute" not in str(
                body["value"]
            )
            verdict = await teams.connector.wait_for(
                lambda c, cid=card_id: (
                    c.method == "PUT"
                    and c.activity_id == cid
                    and ("Goed!" in c.card_text or "Helaas" in c.card_text)
                ),
                what=f"verdict {i + 1}",
            )
            assert ("Goed!" in verdict.card_text) == (choice == RIGHT)
            assert f"Uitleg bij vraag {i + 1}." in verdict.card_text
        final = await teams.connector.wait_for(
            lambda c: "vragen goed" in c.card_text, what="the score"
        )
        assert "Je hebt 2 van de 3 vragen goed" in final.card_text
        [board] = [a for a in execute_actions(final) if a["verb"] == "leaderboard"]
        status, body = await teams.post(
            card_action(url, "leaderboard", board.get("data", {}), reply_to_id=final.activity_id)
        )
        assert (
            status == 200 and "Ranglijst" in str(body["value"]) and USER_AAD in str(body["value"])
        )
        assert [a.choice_index for a in stub.answered] == [RIGHT, 0, RIGHT]
    finally:
        await stop_all(quiz)


async def test_an_answer_counts_once_and_only_for_the_owner(teams: Teams, r42: R42Stub) -> None:
    stub, quiz = await start_quiz_service(teams)
    try:
        store = teams.ctx.store
        await store.quiz_attempts.start(
            QuizAttempt(
                id=f"att-{USER_AAD}",
                user=USER_AAD,
                week="2026-W49",
                question_keys=["q0", "q1", "q2"],
            )
        )
        teams.connector.add_conversation(CONV)
        data = {
            "a": f"att-{USER_AAD}",
            "q": 0,
            "c": RIGHT,
            "qd": {"index": 0, "count": 3, "text": "V?", "options": ["a", "b"]},
        }
        click = card_action(teams.connector.url, "quiz.answer", data, reply_to_id="1:99")
        status, body = await teams.post(click)
        again, body2 = await teams.post(click)  # the same invoke redelivered
        assert (status, again) == (200, 200)
        assert "even kijken" in str(body["value"])
        assert "al verwerkt" in str(body2["value"])
        other = card_action(
            teams.connector.url,
            "quiz.answer",
            data,
            reply_to_id="1:99",
            aad="9f8e7d6c-5b4a-4c3d-8e2f-1a0b9c8d7e6f",
        )
        status, body3 = await teams.post(other)
        assert status == 200 and "niet van jou" in str(body3["value"])
        await teams.settle()
        # The gateway's publish returned once JetStream stored the event; its delivery to
        # the quiz service comes after, so wait for it rather than assume it is there.
        await asyncio.wait_for(stub.got_answer.wait(), 10)
        assert [a.question_index for a in stub.answered] == [0]
        assert await stored_count(teams, QuizAnswered.SUBJECT) == 1  # the redelivery: none
    finally:
        await stop_all(quiz)
