"""A DM or @mention: the working indicator, R42's answer with sources, chip and feedback."""

from __future__ import annotations

import logging

from services.gateway.core import user_message
from services.gateway.slack.blocks import chat as bc
from services.gateway.slack.blocks.kit import escape, notice_blocks, strip_mentions
from services.gateway.slack.gateway import Reply, SlackGateway

log = logging.getLogger(__name__)

EMPTY_MENTION_HINT = (
    "Stel me gerust een vraag, bijvoorbeeld: _Hoe declareer ik reiskosten?_ "
    "Typ `/r42 help` voor alles wat ik kan."
)


async def chat_turn(
    gw: SlackGateway,
    *,
    user: str,
    channel: str,
    text: str,
    thread_ts: str | None,
    correlation: str,
) -> None:
    """Answer one DM / mention in its place (the DM, or the mention's thread)."""
    question = strip_mentions(text)
    if not question:
        await gw.notify(channel, EMPTY_MENTION_HINT, thread_ts=thread_ts)
        return
    if await gw.client.chat.quiz_active(user):
        log.info("quiz active for %s: R42 stays silent", user)
        return
    api = gw.api
    thinking = await api.post(
        channel, bc.thinking_blocks(), text=bc.THINKING_TEXT, thread_ts=thread_ts
    )
    try:
        name = await api.user_name(user)
        reply = await gw.client.chat.ask(
            user_id=user, text=question, user_name=name, correlation_id=correlation
        )
    except Exception as exc:
        text = user_message(exc)
        await api.update(channel, thinking, notice_blocks(f":warning: {text}"), text=text)
        return
    if reply.refused:
        answer = reply.text or "…"
        await api.update(channel, thinking, notice_blocks(escape(answer)), text=answer)
        return
    messages = bc.answer_messages(reply, turn_id=correlation)
    await api.update(channel, thinking, messages[0], text=reply.text[:3000] or "…")
    for extra in messages[1:]:  # long answers continue where the answer is (DM or thread)
        await api.post(channel, extra, text="(vervolg)", thread_ts=thread_ts)


async def feedback(
    gw: SlackGateway, *, user: str, turn_id: str, positive: bool, where: str, reply: Reply
) -> None:
    """Store 👍 / 👎 and thank the user privately."""
    await gw.client.feedback.vote(user_id=user, turn_id=turn_id, positive=positive, where=where)
    await reply.private("Bedankt voor je feedback!")
