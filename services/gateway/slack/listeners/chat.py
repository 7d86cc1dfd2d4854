"""Chat listeners: DMs and @mentions, 👍 / 👎, the proposal chip, admin Approve / Reject."""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_bolt.async_app import AsyncApp

from services.gateway.slack import ids
from services.gateway.slack.flows import chat, reviews
from services.gateway.slack.gateway import SlackGateway
from services.gateway.slack.listeners.interactions import (
    action_value,
    container,
    interaction_reply,
    message_blocks,
    user_of,
)

log = logging.getLogger(__name__)


def register(app: AsyncApp, gw: SlackGateway) -> None:
    """DM / mention events plus the chat buttons."""
    _register_messages(app, gw)
    _register_buttons(app, gw)


def _register_messages(app: AsyncApp, gw: SlackGateway) -> None:
    bg = gw.background

    async def turn(body: dict[str, Any], event: dict[str, Any], in_thread: bool) -> None:
        key = event.get("client_msg_id") or body.get("event_id") or ""
        if not await gw.deduper.claim(f"msg:{key}"):
            log.info("duplicate delivery of %s dropped", key)
            return
        thread_ts = event.get("thread_ts") or (event.get("ts") if in_thread else None)
        await chat.chat_turn(
            gw,
            user=str(event.get("user", "")),
            channel=str(event.get("channel", "")),
            text=str(event.get("text") or ""),
            thread_ts=thread_ts,
            correlation=str(key or event.get("ts", "")),
        )

    @app.event("app_mention")
    async def on_mention(body: dict[str, Any], event: dict[str, Any]) -> None:
        bg.spawn(turn(body, event, in_thread=True), name="chat-mention")

    @app.event("message")
    async def on_message(body: dict[str, Any], event: dict[str, Any]) -> None:
        # Only plain DMs from people: edits, bot posts and file shares have their own paths.
        if event.get("channel_type") != "im" or event.get("subtype") or event.get("bot_id"):
            return
        if event.get("files"):
            return
        bg.spawn(turn(body, event, in_thread=False), name="chat-dm")


def _register_buttons(app: AsyncApp, gw: SlackGateway) -> None:
    bg = gw.background

    @app.action(re.compile(f"^({ids.FEEDBACK_UP}|{ids.FEEDBACK_DOWN})$"))
    async def feedback(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        action_id, value = action_value(body)
        bg.spawn(
            chat.feedback(
                gw,
                user=user_of(body),
                turn_id=value,
                where=container(body)[0],
                positive=action_id == ids.FEEDBACK_UP,
                reply=interaction_reply(gw, body, respond),
            ),
            name="feedback",
        )

    @app.action(re.compile(f"^({ids.PROPOSAL_YES}|{ids.PROPOSAL_NO})$"))
    async def proposal(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        action_id, value = action_value(body)
        bg.spawn(
            reviews.proposal_click(
                gw,
                user=user_of(body),
                proposal_id=value,
                accept=action_id == ids.PROPOSAL_YES,
                blocks=message_blocks(body),
                reply=interaction_reply(gw, body, respond),
            ),
            name="proposal",
        )

    @app.action(re.compile(f"^({ids.SUGGESTION_APPROVE}|{ids.SUGGESTION_REJECT})$"))
    async def review(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        action_id, value = action_value(body)
        bg.spawn(
            reviews.review_click(
                gw,
                user=user_of(body),
                suggestion_id=value,
                approve=action_id == ids.SUGGESTION_APPROVE,
                blocks=message_blocks(body),
                reply=interaction_reply(gw, body, respond),
            ),
            name="review",
        )
