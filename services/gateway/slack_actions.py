"""Button clicks (block_actions): each acks at once, then hands the work to a background task."""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_bolt.async_app import AsyncApp

from services.gateway import actions as ids
from services.gateway import blocks_learn as bl
from services.gateway import slack_commands as cmd
from services.gateway import slack_learn, slack_quiz
from services.gateway.limits import check_blocks
from services.gateway.slack_api import Blocks
from services.gateway.slack_gateway import Reply, SlackGateway

log = logging.getLogger(__name__)


def _message_blocks(body: dict[str, Any]) -> Blocks:
    return [b for b in (body.get("message") or {}).get("blocks") or [] if isinstance(b, dict)]


def interaction_reply(gw: SlackGateway, body: dict[str, Any], respond: Any) -> Reply:
    """Replace the clicked message (chat.update; response_url if ephemeral), or reply privately."""
    channel, ts, ephemeral = _container(body)
    user = str((body.get("user") or {}).get("id", ""))

    async def update(blocks: Blocks, text: str) -> None:
        if ts and channel and not ephemeral:
            await gw.api.update(channel, ts, blocks, text=text)
        else:
            await respond(blocks=check_blocks(blocks), text=text, replace_original=True)

    async def private(text: str) -> None:
        if body.get("response_url"):
            await respond(text=text, response_type="ephemeral", replace_original=False)
        elif channel:
            await gw.api.ephemeral(channel, user, text)

    return Reply(update=update, private=private)


def _container(body: dict[str, Any]) -> tuple[str, str, bool]:
    container = body.get("container") or {}
    channel = container.get("channel_id") or (body.get("channel") or {}).get("id") or ""
    return str(channel), str(container.get("message_ts") or ""), bool(container.get("is_ephemeral"))


def _action_value(body: dict[str, Any]) -> tuple[str, str]:
    action = (body.get("actions") or [{}])[0]
    return str(action.get("action_id", "")), str(action.get("value", ""))


def register_actions(app: AsyncApp, gw: SlackGateway) -> None:
    """Register every button listener; unknown action ids are acked, logged and ignored."""
    bg = gw.background

    def user_of(body: dict[str, Any]) -> str:
        return str((body.get("user") or {}).get("id", ""))

    @app.action(re.compile(f"^({ids.FEEDBACK_UP}|{ids.FEEDBACK_DOWN})$"))
    async def feedback(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        action_id, value = _action_value(body)
        channel, _, _ = _container(body)
        bg.spawn(
            gw.feedback(
                user=user_of(body),
                turn_id=value,
                where=channel,
                positive=action_id == ids.FEEDBACK_UP,
                reply=interaction_reply(gw, body, respond),
            ),
            name="feedback",
        )

    @app.action(re.compile(f"^({ids.PROPOSAL_YES}|{ids.PROPOSAL_NO})$"))
    async def proposal(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        action_id, value = _action_value(body)
        bg.spawn(
            gw.proposal_click(
                user=user_of(body),
                proposal_id=value,
                accept=action_id == ids.PROPOSAL_YES,
                blocks=_message_blocks(body),
                reply=interaction_reply(gw, body, respond),
            ),
            name="proposal",
        )

    @app.action(re.compile(f"^({ids.SUGGESTION_APPROVE}|{ids.SUGGESTION_REJECT})$"))
    async def review(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        action_id, value = _action_value(body)
        bg.spawn(
            gw.review_click(
                user=user_of(body),
                suggestion_id=value,
                approve=action_id == ids.SUGGESTION_APPROVE,
                blocks=_message_blocks(body),
                reply=interaction_reply(gw, body, respond),
            ),
            name="review",
        )

    @app.action(ids.QUIZ_ANSWER_RE)
    async def quiz_answer(ack: Any, body: dict[str, Any]) -> None:
        await ack()
        _, value = _action_value(body)
        channel, ts, _ = _container(body)
        bg.spawn(
            slack_quiz.answer(
                gw,
                user=user_of(body),
                value=value,
                channel=channel,
                ts=ts,
                message_blocks=_message_blocks(body),
            ),
            name="quiz-answer",
        )

    @app.action(ids.QUIZ_START)
    async def quiz_start(ack: Any, body: dict[str, Any]) -> None:
        await ack()
        bg.spawn(slack_quiz.start_quiz(gw, user=user_of(body)), name="quiz-start")

    @app.action(re.compile(f"^({ids.SLIDE_PREV}|{ids.SLIDE_NEXT})$"))
    async def slide(ack: Any, body: dict[str, Any]) -> None:
        await ack()
        target = cmd.slide_target(_action_value(body)[1])
        channel, ts, _ = _container(body)
        if target is None or not channel or not ts:
            log.warning("malformed slide navigation from %s", user_of(body))
            return
        bg.spawn(
            slack_learn.show_content(
                gw,
                channel=channel,
                ts=ts,
                user=user_of(body),
                topic_id=target[0],
                kind="slides",
                week="",
                slide=target[1],
            ),
            name="slide",
        )

    @app.action(ids.LEARN_RE)
    async def learn_kind(ack: Any, body: dict[str, Any]) -> None:
        await ack()
        action_id, topic_id = _action_value(body)
        kind = action_id.removeprefix(ids.LEARN_PREFIX)
        bg.spawn(
            slack_learn.learn(gw, user=user_of(body), kind=kind, topic_id=topic_id or None),  # type: ignore[arg-type]
            name="learn-kind",
        )

    @app.action(ids.REFINE_OPEN)
    async def refine_open(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        user, (_, topic_id) = user_of(body), _action_value(body)
        reply = interaction_reply(gw, body, respond)
        if not gw.client.is_admin(user):
            bg.spawn(reply.private("Alleen beheerders kunnen artikelen verfijnen."), name="refine")
            return
        channel, _, _ = _container(body)
        view = bl.refine_modal(topic_id=topic_id, channel=channel)
        bg.spawn(gw.api.open_view(str(body.get("trigger_id", "")), view), name="refine-open")

    @app.action(ids.SOURCE_CANCEL_RE)
    async def cancel(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        bg.spawn(
            cmd.cancel_source(
                gw,
                user=user_of(body),
                source_id=_action_value(body)[1],
                reply=interaction_reply(gw, body, respond),
            ),
            name="cancel",
        )

    @app.action(ids.GRAPH_FOLLOW_RE)
    async def follow(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        bg.spawn(
            cmd.graph_follow(
                gw, topic_id=_action_value(body)[1], reply=interaction_reply(gw, body, respond)
            ),
            name="graph",
        )

    @app.action(re.compile(".*"))
    async def unknown(ack: Any, body: dict[str, Any]) -> None:
        await ack()
        log.warning(
            "ignoring unknown action %r from %s", _action_value(body)[0][:100], user_of(body)
        )
