"""Chat listeners: DMs and @mentions, 👍 / 👎, the proposal chip, admin Approve / Reject."""

from __future__ import annotations

import json
import logging
from typing import Any

from slack_bolt.async_app import AsyncApp

from services.gateway.slack import ids
from services.gateway.slack.blocks import chat as bc
from services.gateway.slack.blocks.kit import notice_blocks, strip_mentions
from services.gateway.slack.flows import chat, reviews, uploads
from services.gateway.slack.gateway import Reply, SlackGateway
from services.gateway.slack.listeners.interactions import (
    action_value,
    container,
    message_blocks,
    on_click,
    text_input,
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
        key = chat.turn_id(body, event)
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
            correlation=key,
            team=str(body.get("team_id") or event.get("team") or "") or None,
            message_ts=str(event.get("ts") or "") or None,
        )

    @app.event("app_mention")
    async def on_mention(body: dict[str, Any], event: dict[str, Any]) -> None:
        bg.spawn(turn(body, event, in_thread=True), name="chat-mention")

    @app.event("message")
    async def on_message(body: dict[str, Any], event: dict[str, Any], context: Any) -> None:
        # Plain DMs and DMs with a file from people; edits and bot posts are not questions.
        subtype, kind = event.get("subtype"), event.get("channel_type")
        if event.get("bot_id") or subtype not in (None, "file_share"):
            return
        if kind == "mpim":  # a group DM: only when R42 is mentioned (deduped with app_mention)
            if f"<@{context.get('bot_user_id')}>" in str(event.get("text") or ""):
                bg.spawn(turn(body, event, in_thread=True), name="chat-mpim")
            return
        if kind != "im":
            return
        if subtype == "file_share":
            bg.spawn(uploads.shared_in_dm(gw, event), name="file-share")
            if not strip_mentions(str(event.get("text") or "")):
                return  # a file without a question
        bg.spawn(turn(body, event, in_thread=False), name="chat-dm")


def _register_buttons(app: AsyncApp, gw: SlackGateway) -> None:
    bg = gw.background

    async def feedback(body: dict[str, Any], reply: Reply) -> None:
        vote = bc.parse_feedback(action_value(body)[1])
        if vote is None:
            log.warning("malformed feedback value from %s", user_of(body))
            return
        positive, turn_id = vote
        if not positive and body.get("trigger_id"):  # the trigger expires in 3 s: open first
            try:
                await gw.api.open_view(str(body["trigger_id"]), bc.feedback_modal(turn_id=turn_id))
            except Exception as exc:  # the vote counts without a reason too
                log.info("feedback modal not opened for %s: %s", user_of(body), exc)
        await chat.feedback(
            gw, user=user_of(body), turn_id=turn_id, where=container(body)[0],
            positive=positive, blocks=message_blocks(body), reply=reply,
        )  # fmt: skip

    on_click(app, gw, ids.FEEDBACK, feedback, name="feedback")

    @app.view(ids.FEEDBACK_VIEW)
    async def feedback_reason(ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        await ack()
        try:
            turn_id = str(json.loads(view.get("private_metadata") or "{}")["t"])
        except (ValueError, KeyError, TypeError):
            log.warning("feedback modal without a turn from %s", user_of(body))
            return
        comment = text_input(view, bc.FEEDBACK_INPUT_BLOCK, bc.FEEDBACK_INPUT_ACTION)
        bg.spawn(
            chat.feedback_reason(gw, user=user_of(body), turn_id=turn_id, comment=comment),
            name="feedback-reason",
        )

    async def clear(body: dict[str, Any], reply: Reply) -> None:
        action_id, conversation = action_value(body)
        if action_id == ids.CLEAR_CANCEL:
            await reply.update(notice_blocks("Niets gewist."), "Niets gewist.")
        else:
            await chat.clear_confirmed(gw, user=user_of(body), conversation=conversation,
                                       reply=reply)  # fmt: skip

    async def proposal(body: dict[str, Any], reply: Reply) -> None:
        action_id, value = action_value(body)
        await reviews.proposal_click(gw, user=user_of(body), proposal_id=value,
                                     accept=action_id == ids.PROPOSAL_YES,
                                     blocks=message_blocks(body), reply=reply)  # fmt: skip

    async def review(body: dict[str, Any], reply: Reply) -> None:
        action_id, value = action_value(body)
        await reviews.review_click(gw, user=user_of(body), value=value,
                                   approve=action_id == ids.SUGGESTION_APPROVE,
                                   blocks=message_blocks(body), reply=reply)  # fmt: skip

    on_click(app, gw, ids.matching(ids.CLEAR_CONFIRM, ids.CLEAR_CANCEL), clear, name="clear")
    on_click(app, gw, ids.matching(ids.PROPOSAL_YES, ids.PROPOSAL_NO), proposal, name="proposal")
    on_click(
        app, gw, ids.matching(ids.SUGGESTION_APPROVE, ids.SUGGESTION_REJECT), review, name="review"
    )
