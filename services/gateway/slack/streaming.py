"""One R42 answer streamed into a Slack thread (chat.startStream / appendStream / stopStream).

Text arrives from the bus in order; at most one Slack call is in flight and text that comes
meanwhile goes along with the next one, at most one append per `APPEND_INTERVAL_S` after the
first (which goes at once). The stream starts on the first text, so a turn that fails or is
refused before any text never opens one. At the end the reply's text decides: the rest of it
is appended as the stream stops with sources and feedback under it; if the reply is not a
continuation of what was streamed (an apology after a broken turn), the finished message is
replaced by the reply as a normal answer.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any, Literal

from slack_sdk.web.async_chat_stream import AsyncChatStream

from services.gateway.slack.api import Blocks, SlackApi
from services.gateway.slack.blocks.kit import check_blocks, escape

log = logging.getLogger(__name__)

Outcome = Literal["done", "none", "replace"]
APPEND_INTERVAL_S = 0.25
MAX_PIECE_CHARS = 11_000  # Slack takes at most 12,000 characters of markdown per call


class AnswerStream:
    """Streams one answer's text into a thread; `finish` adds the reply's tail or falls back."""

    def __init__(
        self, api: SlackApi, *, channel: str, thread_ts: str, user: str, team: str | None
    ) -> None:
        self._api = api
        self._channel = channel
        self._thread_ts = thread_ts
        self._user = user
        self._team = team
        self._stream: AsyncChatStream | None = None
        self._pending = ""
        self._task: asyncio.Task[None] | None = None
        self._last = 0.0
        self.sent = ""
        self.failed = False
        self.on_started: Callable[[], Coroutine[Any, Any, None]] | None = None
        self._started_task: asyncio.Task[None] | None = None

    async def append(self, text: str) -> None:
        """Queue text (called in order); the pump sends it without making the caller wait."""
        if self.failed or not text:
            return
        self._pending += text
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._pump(), name="slack-stream")

    async def _pump(self) -> None:
        while self._pending and not self.failed:
            wait = self._last + APPEND_INTERVAL_S - time.monotonic()
            if self.sent and wait > 0:
                await asyncio.sleep(wait)
            piece, self._pending = self._pending[:MAX_PIECE_CHARS], self._pending[MAX_PIECE_CHARS:]
            try:
                await self._send(piece)
            except Exception as exc:  # the reply still comes; finish() falls back to posting
                log.warning("streaming into %s/%s failed: %s", self._channel, self._thread_ts, exc)
                self.failed = True
                return
            if not self.sent and self.on_started is not None:
                self._started_task = asyncio.create_task(self.on_started())
            self.sent += piece
            self._last = time.monotonic()

    async def _send(self, piece: str) -> None:
        if self._stream is None:
            self._stream = await self._api.client.chat_stream(
                channel=self._channel,
                thread_ts=self._thread_ts,
                # Slack needs the recipient outside DMs (whose ids start with D).
                recipient_user_id=None if self._channel.startswith("D") else self._user,
                recipient_team_id=None if self._channel.startswith("D") else self._team,
                buffer_size=1,  # our pump already batches; the helper must not hold text back
            )
        await self._stream.append(markdown_text=escape(piece))

    async def finish(self, *, text: str, tail: Blocks) -> Outcome:
        """Close the stream: "done" (rest of `text` and `tail` added), "none" (nothing was
        streamed: post the reply), or "replace" (the reply does not continue the stream, or
        closing failed: replace message `ts` with the reply)."""
        await self._settled()
        if self._stream is None or self._stream.ts is None:
            return "none"
        rest = _continuation(self.sent, text)
        try:
            if rest is None:
                await self._stream.stop()
                return "replace"
            pieces = [rest[i : i + MAX_PIECE_CHARS] for i in range(0, len(rest), MAX_PIECE_CHARS)]
            for piece in pieces[:-1]:
                await self._stream.append(markdown_text=escape(piece))
            last = escape(pieces[-1]) if pieces else None
            await self._stream.stop(markdown_text=last, blocks=check_blocks(tail))
        except Exception as exc:
            log.warning(
                "closing the stream in %s/%s failed: %s", self._channel, self._thread_ts, exc
            )
            return "replace"
        return "done"

    async def abort(self) -> None:
        """Stop a started stream as it is (the caller replaces message `ts`)."""
        await self._settled()
        self.failed = True
        if self._stream is not None and self._stream.ts is not None:
            try:
                await self._stream.stop()
            except Exception as exc:
                log.info("stopping the stream in %s failed: %s", self._channel, exc)

    async def _settled(self) -> None:
        tasks = [t for t in (self._task, self._started_task) if t is not None]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    @property
    def ts(self) -> str | None:
        """The streamed message, once Slack started it."""
        return self._stream.ts if self._stream is not None else None


def _continuation(sent: str, text: str) -> str | None:
    """What of `text` is still to be sent after `sent`; None when it does not continue it."""
    if text.startswith(sent):
        return text[len(sent) :]
    if sent.strip() == text.strip():
        return ""
    if sent.rstrip() and text.startswith(sent.rstrip()):
        return text[len(sent.rstrip()) :]
    return None
