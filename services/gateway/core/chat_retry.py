"""rpc.r42.chat with retries: the same turn id again until a reply comes or the budget ends.

Core NATS request/reply has no redelivery: a turn on a replica that dies (or a reply lost while
a NATS node fails over) never answers. The r42 service runs a turn id at most once and hands a
repeat the stored reply (services/r42/idempotency.py), so asking again is safe. An attempt ends
when no replica is subscribed (jittered backoff, then again), when a plain request gets no reply
within ATTEMPT_S, when a streamed one goes quiet for ATTEMPT_S (a live turn keeps streaming; a
repeat that waits for a live holder just waits again), or at once when this client's connection
dropped and came back meanwhile (a reply sent in between is lost). Each attempt tells r42 how
long it waits (`wait_s`), so a repeat waiting on another replica's run never outlives its
caller. Streamed text is passed on once: a later attempt's chunks only continue what was
already shown, and the final reply always carries the whole answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from faststream.exceptions import IncorrectState
from faststream.nats import NatsBroker

from shared.bus import (
    CHAT_SUBJECT,
    ChatReply,
    ChatRequest,
    NoResponderError,
    RpcTimeoutError,
    request,
    request_stream,
)
from shared.errors import BusError, TransientError

log = logging.getLogger(__name__)

ATTEMPT_S = 6.0
RECONNECT_CHECK_S = 0.2
UNREACHABLE_S = 3.0
"""How long to keep asking while no r42 replica is subscribed (one restarting comes back)."""
BACKOFF_BASE_S = 0.25
BACKOFF_CAP_S = 2.0
TextSink = Callable[[str], Awaitable[None]]


@dataclass
class ShownText:
    """What the caller's sink has shown; later attempts may only continue it."""

    sink: TextSink
    shown: str = ""

    def attempt(self) -> TextSink:
        """A sink for one attempt: passes on only text beyond what was shown, never twice."""
        received = ""
        diverged = False

        async def send(chunk: str) -> None:
            nonlocal received, diverged
            if diverged:
                return
            received += chunk
            if len(received) <= len(self.shown):
                diverged = not self.shown.startswith(received)
                return
            if not received.startswith(self.shown):
                diverged = True  # a different answer: the final reply replaces the text
                return
            new, self.shown = received[len(self.shown) :], received
            await self.sink(new)

        return send


async def ask_r42(
    broker: NatsBroker,
    req: ChatRequest,
    *,
    timeout: float,  # noqa: ASYNC109 - the whole turn's budget, across attempts
    namespace: str = "",
    on_text: TextSink | None = None,
    attempt_s: float = ATTEMPT_S,
    unreachable_s: float = UNREACHABLE_S,
) -> ChatReply:
    """One chat turn, asked again with the same turn id until a reply or `timeout` (BusError).

    With no replica subscribed for `unreachable_s` in a row it gives up early (NoResponderError).
    """
    if req.turn_id is None:
        raise ValueError("a retried chat request needs a turn id")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    shown = ShownText(on_text) if on_text is not None else None
    attempt = 0
    unreachable_since: float | None = None
    while True:
        attempt += 1
        remaining = deadline - loop.time()
        window = min(attempt_s, remaining)
        ask = req.model_copy(update={"wait_s": max(window, 0.001)})
        try:
            if shown is not None:
                call = request_stream(
                    broker, CHAT_SUBJECT, ask, response_model=ChatReply,
                    on_chunk=shown.attempt(), timeout=remaining, namespace=namespace,
                    idle_timeout=attempt_s,
                )  # fmt: skip
            else:
                call = request(broker, CHAT_SUBJECT, ask, response_model=ChatReply,
                               timeout=window, namespace=namespace)  # fmt: skip
            return await _unless_reconnected(broker, call)
        except TransientError as exc:  # BusError (no responders, no reply) or a remote one
            now = loop.time()
            if isinstance(exc, NoResponderError):
                unreachable_since = unreachable_since or now
                if now - unreachable_since >= unreachable_s:
                    raise
            else:
                unreachable_since = None
            left = deadline - now
            if left <= 0.05:
                raise BusError(f"R42 did not answer within {timeout:g} s ({exc})") from exc
            # A timeout has waited already, and after a reconnect the reply is lost: ask at
            # once. "No responders" or a remote error came back at once: back off first.
            waited = isinstance(exc, (RpcTimeoutError, ReconnectedError))
            pause = 0.0 if waited else _backoff(attempt)
            log.warning("chat turn %s: attempt %d failed (%s); asking again",
                        req.turn_id, attempt, exc)  # fmt: skip
            await asyncio.sleep(min(pause, left))


class ReconnectedError(TransientError):
    """The connection dropped and came back during the attempt: its reply may be lost."""


async def _unless_reconnected[T](broker: NatsBroker, call: Coroutine[Any, Any, T]) -> T:
    """Await `call`, ending it early once the connection has reconnected in the meantime.

    A reply sent while this client was cut off (its NATS node died) is lost for good: asking
    again at once beats waiting out the attempt.
    """
    try:
        nc = broker.connection
    except IncorrectState:
        return await call
    before = nc.stats["reconnects"]
    task = asyncio.ensure_future(call)
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=RECONNECT_CHECK_S)
            if done:
                return task.result()
            if nc.stats["reconnects"] != before and nc.is_connected:
                raise ReconnectedError("the connection to NATS was re-established")
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def _backoff(attempt: int) -> float:
    """Full-jitter exponential backoff: a random pause up to base·2^(n-1), capped."""
    return random.uniform(0, min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2 ** (attempt - 1)))
