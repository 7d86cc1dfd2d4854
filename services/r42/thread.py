"""A user's conversation: what is kept, what is sent to the model, and clearing it.

Rules:
- The store keeps the newest 50 messages per user (THREAD_MAX_MESSAGES).
- An empty thread is seeded with R42's greeting (an assistant message).
- A turn is stored only when it completed, as one (user, assistant) pair in a single
  append; a failed or refused turn stores nothing. So the thread never holds a user
  message without its answer, whatever fails.
- The model gets the last 12 complete turns. When older turns exist, the first message
  sent starts with one "(earlier conversation truncated)" notice. Assistant messages
  before the first user message (the greeting) are not sent: the Messages API
  conversation starts with a user turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from services.r42.ports import R42Store
from services.r42.prompts import GREETING, HISTORY_TRUNCATED
from shared.bus import ClearReply
from shared.store import ThreadMessage, utcnow

MAX_TURNS_SENT = 12


def history_turns(history: Sequence[ThreadMessage]) -> list[tuple[str, str]]:
    """Complete (user, assistant) turns, oldest first; unanswered user messages are skipped."""
    turns: list[tuple[str, str]] = []
    pending: str | None = None
    for message in history:
        if message.role == "user":
            pending = message.text  # a user message never answered is superseded
        elif pending is not None:
            turns.append((pending, message.text))
            pending = None
        elif turns:
            # Two assistant messages in a row (not written by R42): keep them together.
            user, answer = turns[-1]
            turns[-1] = (user, f"{answer}\n\n{message.text}")
    return turns


def history_messages(
    history: Sequence[ThreadMessage], *, max_turns: int = MAX_TURNS_SENT
) -> list[dict[str, Any]]:
    """The last max_turns turns as Messages API messages, with one truncation notice."""
    turns = history_turns(history)
    truncated = len(turns) > max_turns
    kept = turns[-max_turns:] if max_turns > 0 else []
    messages: list[dict[str, Any]] = []
    for i, (user, answer) in enumerate(kept):
        content: str | list[dict[str, str]] = user
        if truncated and i == 0:
            content = [
                {"type": "text", "text": HISTORY_TRUNCATED},
                {"type": "text", "text": user},
            ]
        messages.append({"role": "user", "content": content})
        messages.append({"role": "assistant", "content": answer})
    return messages


def greeting_message(now: datetime | None = None) -> ThreadMessage:
    """R42's greeting as the first message of a thread."""
    return ThreadMessage(role="assistant", text=GREETING, at=now or utcnow())


async def load_thread(store: R42Store, user_id: str) -> list[ThreadMessage]:
    """The user's thread, seeded with the greeting when it is empty."""
    history = await store.threads.get(user_id)
    if history:
        return history
    greeting = greeting_message()
    await store.threads.append(user_id, [greeting])
    return [greeting]


async def clear_thread(*, store: R42Store, user_id: str) -> ClearReply:
    """Wipe the user's thread and reseed the greeting."""
    removed = await store.threads.clear(user_id)
    await store.threads.append(user_id, [greeting_message()])
    return ClearReply(removed=removed, greeting=GREETING)
