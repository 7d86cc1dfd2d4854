"""Quiz listeners: /quiz, /leaderboard, the answer buttons and Start on App Home."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from services.gateway.slack import ids
from services.gateway.slack.flows import quiz, quiz_bank
from services.gateway.slack.gateway import Reply, SlackGateway
from services.gateway.slack.listeners.interactions import (
    action_value,
    container,
    message_blocks,
    on_click,
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

    async def quiz_answer(body: dict[str, Any], _reply: Reply) -> None:
        channel, ts, _ = container(body)
        await quiz.answer(gw, user=user_of(body), value=action_value(body)[1], channel=channel,
                          ts=ts, message_blocks=message_blocks(body))  # fmt: skip

    async def quiz_start(body: dict[str, Any], _reply: Reply) -> None:
        await quiz.start_quiz(gw, user=user_of(body))

    on_click(app, gw, ids.QUIZ_ANSWER_RE, quiz_answer, name="quiz-answer")
    on_click(app, gw, ids.QUIZ_START, quiz_start, name="quiz-start")

    async def bank(body: dict[str, Any], _reply: Reply) -> None:
        await quiz_bank.regenerate_click(gw, user=user_of(body), topic_id=action_value(body)[1],
                                         channel=container(body)[0])  # fmt: skip

    on_click(app, gw, ids.QUIZ_BANK, bank, name="quiz-bank")
