"""A DM or @mention: the working indicator, R42's answer with sources, chip and feedback.

The answer streams in as R42 writes it (services/gateway/slack/streaming.py) and the working
indicator goes when the first text arrives. Slack streams only replies to a user's message
(chat.startStream takes the `thread_ts` of the request), so a top-level DM is answered in the
thread of the question, while its memory stays the DM's; a thread (assistant thread, channel
mention, group DM) is answered in place. A turn whose stream could not start gets the answer
posted in place of the indicator.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from services.gateway.core import user_message
from services.gateway.slack.api import Blocks
from services.gateway.slack.blocks import chat as bc
from services.gateway.slack.blocks.kit import escape, notice_blocks, strip_mentions
from services.gateway.slack.flows.thread_notes import thread_notes, wants_thread
from services.gateway.slack.gateway import Reply, SlackGateway
from services.gateway.slack.streaming import AnswerStream
from shared.bus import ThreadNote

log = logging.getLogger(__name__)

WORKING_STATUS = "R42 zoekt in het handboek…"
QUIZ_NOTICE = (
    ":pencil: Je quiz loopt nog, dus R42 beantwoordt nu geen vragen. "
    "Maak de quiz af, of stop hem met `/quiz stop`."
)
EMPTY_MENTION_HINT = (
    "Stel me gerust een vraag, bijvoorbeeld: _Hoe declareer ik reiskosten?_ "
    "Typ `/r42 help` voor alles wat ik kan."
)


def turn_id(body: dict[str, Any], event: dict[str, Any]) -> str:
    """The id of the chat turn a Slack message starts, the same on every retry of its event.

    The client's message id (one per message typed, also when Slack sends it as `message` and
    `app_mention`), else the event id: the dedupe key, the turn's correlation id and the id a
    retried chat call must carry to be answered once.
    """
    return str(event.get("client_msg_id") or body.get("event_id") or event.get("ts") or "")


def conversation_key(channel: str, thread_ts: str | None = None) -> str:
    """One memory per DM, per channel thread and per assistant thread (never across them)."""
    return f"slack:{channel}:{thread_ts}" if thread_ts else f"slack:{channel}"


async def chat_turn(
    gw: SlackGateway,
    *,
    user: str,
    channel: str,
    text: str,
    thread_ts: str | None,
    correlation: str,
    assistant: bool = False,
    team: str | None = None,
    message_ts: str | None = None,
) -> None:
    """Answer one DM / mention in its place; in an assistant thread the status says it works.

    `thread_ts` is the conversation's thread (None for a top-level DM); `message_ts` is the
    question itself, under which a top-level DM's answer streams.
    """
    question = strip_mentions(text)
    if not question:
        await gw.notify(channel, EMPTY_MENTION_HINT, thread_ts=thread_ts)
        return
    if await gw.client.chat.quiz_active(user):
        await gw.notify(channel, QUIZ_NOTICE, thread_ts=thread_ts)
        return
    api = gw.api
    thinking = None
    reply_ts = thread_ts or message_ts  # where the answer goes
    if assistant and thread_ts:
        assistant = await _working(gw, channel, thread_ts)
    if not assistant:
        thinking = await api.post(
            channel, bc.thinking_blocks(), text=bc.THINKING_TEXT, thread_ts=reply_ts
        )
    stream = None
    if reply_ts:
        stream = AnswerStream(api, channel=channel, thread_ts=reply_ts, user=user, team=team)
        if thinking:
            stream.on_started = _dropper(gw, channel, thinking)
    try:
        name = await api.user_name(user)
        notes: list[ThreadNote] = []
        if (
            thread_ts
            and message_ts
            and wants_thread(channel=channel, thread_ts=thread_ts, message_ts=message_ts)
        ):
            notes = await thread_notes(
                gw, channel=channel, thread_ts=thread_ts, message_ts=message_ts
            )
        reply = await gw.client.chat.ask(
            user_id=user,
            text=question,
            conversation=conversation_key(channel, thread_ts),
            user_name=name,
            thread=notes,
            correlation_id=correlation,
            on_text=stream.append if stream is not None else None,
            turn_id=correlation,  # client_msg_id / event_id: a repeat is answered once
        )
    except Exception as exc:
        text = user_message(exc)
        if stream is not None:
            await stream.abort()
        await _show(gw, channel, stream_ts(stream, thinking), reply_ts,
                    notice_blocks(f":warning: {text}"), text)  # fmt: skip
        return
    if reply.refused:
        answer = reply.text or "…"
        if stream is not None:
            await stream.abort()
        await _show(gw, channel, stream_ts(stream, thinking), reply_ts,
                    notice_blocks(escape(answer)), answer)  # fmt: skip
        return
    try:
        await gw.client.feedback.record_turn(
            turn_id=correlation, user_id=user, question=question, reply=reply
        )
    except Exception as exc:  # the answer matters more than its feedback record
        log.warning("turn %s not recorded for feedback: %s", correlation[:40], exc)
    if stream is not None:
        tail = bc.answer_tail(reply, turn_id=correlation)
        if await stream.finish(text=reply.text, tail=tail) == "done":
            return
        thinking = stream_ts(stream, thinking)
    messages = bc.answer_messages(reply, turn_id=correlation)
    await _show(gw, channel, thinking, reply_ts, messages[0], reply.text[:3000] or "…")
    for extra in messages[1:]:  # long answers continue where the answer is (its thread)
        await api.post(channel, extra, text="(vervolg)", thread_ts=reply_ts)


def stream_ts(stream: AnswerStream | None, thinking: str | None) -> str | None:
    """The message to put a posted answer in: the started stream's, else the indicator."""
    return stream.ts if stream is not None and stream.ts else thinking


def _dropper(gw: SlackGateway, channel: str, ts: str) -> Callable[[], Coroutine[Any, Any, None]]:
    async def drop() -> None:
        try:
            await gw.api.delete(channel, ts)
        except Exception as exc:  # a leftover indicator is untidy, not wrong
            log.info("working indicator %s not deleted: %s", ts, exc)

    return drop


async def _working(gw: SlackGateway, channel: str, thread_ts: str) -> bool:
    """Set the assistant thread's status; False when Slack refuses (not an assistant thread)."""
    try:
        await gw.api.set_status(channel, thread_ts, WORKING_STATUS)
    except Exception as exc:
        log.info("no assistant status in %s/%s: %s", channel, thread_ts, exc)
        return False
    return True


async def _show(
    gw: SlackGateway,
    channel: str,
    thinking: str | None,
    thread_ts: str | None,
    blocks: Blocks,
    text: str,
) -> None:
    """Replace the working indicator, or post (which also clears an assistant status)."""
    if thinking:
        await gw.api.update(channel, thinking, blocks, text=text)
    else:
        await gw.api.post(channel, blocks, text=text, thread_ts=thread_ts)


async def feedback(
    gw: SlackGateway,
    *,
    user: str,
    turn_id: str,
    positive: bool,
    where: str,
    blocks: Blocks,
    reply: Reply,
) -> None:
    """Store 👍 / 👎 with its turn; the buttons become a thank-you."""
    try:
        await gw.client.feedback.vote(user_id=user, turn_id=turn_id, positive=positive, where=where)
    except Exception as exc:
        await reply.private(user_message(exc))
        return
    if blocks:
        await reply.update(bc.feedback_thanks(blocks), bc.FEEDBACK_THANKS)
    else:
        await reply.private(bc.FEEDBACK_THANKS)


async def feedback_reason(gw: SlackGateway, *, user: str, turn_id: str, comment: str) -> None:
    """The 'wat was er mis?' modal was sent: keep the reason with the vote."""
    if comment.strip():
        await gw.client.feedback.explain(user_id=user, turn_id=turn_id, comment=comment)


async def clear_confirmed(gw: SlackGateway, *, user: str, conversation: str, reply: Reply) -> None:
    """The Wissen button under /r42 clear: wipe that conversation of the clicking user."""
    try:
        cleared = await gw.client.chat.clear(user_id=user, conversation=conversation)
    except Exception as exc:
        await reply.private(user_message(exc))
        return
    text = f"Je gesprek is gewist ({cleared.removed} berichten). {cleared.greeting}"
    await reply.update(notice_blocks(escape(text)), text)
