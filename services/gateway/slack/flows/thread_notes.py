"""What was said in a channel thread before R42 was mentioned in it, as context for the turn.

Only an @mention inside an existing channel thread reads it (DMs and assistant threads have
R42's own memory). One bounded `conversations.replies` read: the thread's opening message and
the latest messages before the mention, each cut short, authors by display name. The text is
context the r42 service quotes to the model as such, never instructions.
"""

from __future__ import annotations

from typing import Any

from services.gateway.slack.blocks.kit import strip_mentions
from services.gateway.slack.gateway import SlackGateway
from shared.bus import ThreadNote
from shared.bus.chat import MAX_THREAD_NOTE_CHARS, MAX_THREAD_NOTES

READ_LIMIT = 100
"""Messages read from the thread (one page); the notes are the first and the latest of them."""
BOT_AUTHOR = "een bot"


def wants_thread(*, channel: str, thread_ts: str | None, message_ts: str | None) -> bool:
    """Whether the turn is a mention inside an existing channel or group thread."""
    in_channel = channel[:1] in ("C", "G")
    return bool(in_channel and thread_ts and message_ts and thread_ts != message_ts)


async def thread_notes(
    gw: SlackGateway, *, channel: str, thread_ts: str, message_ts: str
) -> list[ThreadNote]:
    """The thread's opening and latest messages before the question, oldest first."""
    messages = await gw.api.thread_messages(
        channel, thread_ts, before_ts=message_ts, limit=READ_LIMIT
    )
    said = [m for m in messages if strip_mentions(str(m.get("text") or ""))]
    if len(said) > MAX_THREAD_NOTES:
        said = [said[0], *said[-(MAX_THREAD_NOTES - 1) :]]  # the opening says what it is about
    return [
        ThreadNote(author=await _author(gw, m), text=_clipped(m)) for m in said
    ]  # fmt: skip


async def _author(gw: SlackGateway, message: dict[str, Any]) -> str:
    if message.get("bot_id") or message.get("subtype") == "bot_message":
        return BOT_AUTHOR  # R42's own answers in the thread, or another app's post
    user = str(message.get("user") or "")
    return (await gw.api.user_name(user) if user else "") or "iemand"


def _clipped(message: dict[str, Any]) -> str:
    text = " ".join(strip_mentions(str(message.get("text") or "")).split())
    if len(text) <= MAX_THREAD_NOTE_CHARS:
        return text
    return text[: MAX_THREAD_NOTE_CHARS - 1].rsplit(" ", 1)[0] + "…"
