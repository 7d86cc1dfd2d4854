"""Streamed rpc replies, the responder's side: interim text chunks before the final reply.

A caller that wants chunks sends its request with the `R42-Stream` header to a reply inbox of
its own. While the handler runs, `chunk_sink()` gives it a sink whose text goes to that inbox
as messages with an `R42-Chunk: <seq>` header (1, 2, …), coalesced to at most one per
`interval` after the first (which goes at once: a person is waiting for it) and at most
`MAX_CHUNKS` per request; the final reply follows them and always carries the whole result,
so a caller that missed or dropped chunks loses nothing. All messages of one request leave
one connection in order, and core NATS keeps the order of one publisher on one subject.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextvars import ContextVar

from nats.aio.client import Client

log = logging.getLogger(__name__)

STREAM_HEADER = "R42-Stream"
"""On a request: the caller reads chunks on its reply inbox before the final reply."""
CHUNK_HEADER = "R42-Chunk"
"""On an interim message: its sequence number, from 1."""
MAX_CHUNKS = 200
"""Chunks per request at most; the NATS permissions allow this many responses plus the reply."""
MAX_CHUNK_BYTES = 16_000
"""A chunk's text at most (a longer buffer is sent in several chunks)."""
CHUNK_INTERVAL_S = 0.1

ChunkSink = Callable[[str], Awaitable[None]]

_current: ContextVar[ChunkSender | None] = ContextVar("r42_rpc_chunks", default=None)


def chunk_sink() -> ChunkSink | None:
    """The running rpc handler's sink for interim text (None when its caller wants none)."""
    sender = _current.get()
    return sender.send if sender is not None else None


class ChunkSender:
    """Sends one request's interim text to its reply inbox: ordered, coalesced, bounded."""

    def __init__(
        self, nc: Client, reply: str, *, interval: float = CHUNK_INTERVAL_S, limit: int = MAX_CHUNKS
    ) -> None:
        self._nc = nc
        self._reply = reply
        self._interval = interval
        self._limit = limit
        self._buffer = ""
        self._seq = 0
        self._last = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self.closed = False

    async def send(self, text: str) -> None:
        """Queue text; it leaves now if the last chunk is older than the interval, else soon."""
        if self.closed or self._seq >= self._limit or not text:
            return
        self._buffer += text
        wait = self._last + self._interval - time.monotonic()
        if wait <= 0:
            await self._flush()
        elif self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(wait, self._flush_soon)

    def _flush_soon(self) -> None:
        self._timer = None
        task = asyncio.create_task(self._flush())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _flush(self) -> None:
        async with self._lock:
            while self._buffer and self._seq < self._limit:
                piece = _head(self._buffer, MAX_CHUNK_BYTES)
                self._buffer = self._buffer[len(piece) :]
                self._seq += 1
                try:
                    await self._nc.publish(
                        self._reply, piece.encode(), headers={CHUNK_HEADER: str(self._seq)}
                    )
                except Exception as exc:  # the final reply still carries everything
                    log.info("rpc chunk to %s not sent: %s", self._reply, exc)
                    self.closed = True
                    return
            self._last = time.monotonic()

    async def close(self) -> None:
        """Send what is buffered, then no more (the final reply comes next)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        if not self.closed:
            await self._flush()
        self.closed = True


def _head(text: str, max_bytes: int) -> str:
    """The longest prefix of `text` whose UTF-8 form fits in `max_bytes`."""
    if len(text.encode()) <= max_bytes:
        return text
    return text.encode()[:max_bytes].decode(errors="ignore")


@contextlib.asynccontextmanager
async def streamed_reply(
    nc: Client | None, reply: str, headers: Mapping[str, str] | None
) -> AsyncIterator[None]:
    """Around one rpc handler: a chunk sink when the caller asked for one, flushed at the end."""
    if nc is None or not reply or not (headers or {}).get(STREAM_HEADER):
        yield
        return
    sender = ChunkSender(nc, reply)
    token = _current.set(sender)
    try:
        yield
    finally:
        _current.reset(token)
        await sender.close()
