"""Quiz listeners: /quiz, /leaderboard, the answer buttons and Start on App Home."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from services.gateway.slack import ids
from services.gateway.slack.flows import quiz
from services.gateway.slack.gateway import SlackGateway
from services.gateway.slack.listeners.interactions import (
    action_value,
    container,
    message_blocks,
    respond_fn,
    user_of,
)

QUIZ_ACK = "De quiz komt in je DM."
QUIZ_USAGE = "Gebruik `/quiz` om de quiz van deze week te starten, `/quiz stop` om te stoppen."


def register(app: AsyncApp, gw: SlackGateway) -> None:
    """The quiz commands and buttons."""
    bg = gw.background

    @app.command("/quiz")
    async def quiz_command(ack: Any, command: dict[str, Any], respond: Any) -> None:
        arg = str(command.get("text") or "").strip().lower()
        if arg in ("stop", "stoppen"):
            await ack()
            bg.spawn(
                quiz.stop_quiz(gw, user=command["user_id"], respond=respond_fn(respond)),
                name="quiz-stop",
            )
            return
        if arg:
            await ack(text=QUIZ_USAGE)
            return
        await ack(text=QUIZ_ACK)
        bg.spawn(quiz.start_quiz(gw, user=command["user_id"]), name="quiz")

    @app.command("/leaderboard")
    async def leaderboard(ack: Any, command: dict[str, Any], respond: Any) -> None:
        await ack()
        bg.spawn(
            quiz.leaderboard_command(gw, user=command["user_id"], respond=respond_fn(respond)),
            name="leaderboard",
        )

    @app.action(ids.QUIZ_ANSWER_RE)
    async def quiz_answer(ack: Any, body: dict[str, Any]) -> None:
        await ack()
        channel, ts, _ = container(body)
        bg.spawn(
            quiz.answer(
                gw,
                user=user_of(body),
                value=action_value(body)[1],
                channel=channel,
                ts=ts,
                message_blocks=message_blocks(body),
            ),
            name="quiz-answer",
        )

    @app.action(ids.QUIZ_START)
    async def quiz_start(ack: Any, body: dict[str, Any]) -> None:
        await ack()
        bg.spawn(quiz.start_quiz(gw, user=user_of(body)), name="quiz-start")
