"""Idempotent chat turns: a repeat of a turn id gets the stored reply, never a second turn.

A caller (the gateway core) retries `rpc.r42.chat` with the same turn id when a reply does not
come (a replica or NATS node died, a reply was lost in a reconnect). Per turn key (the thread,
the turn id and the text, so one user can never read another's reply):

- a finished turn's reply is stored (idempotency scope `r42.turn.reply`, a day): a repeat gets
  it back, marked `replayed`, without a model call;
- a running turn holds a lease (`r42.turn:<key>`, renewed while it runs): a repeat on another
  replica waits for the stored reply, or takes the turn over once the lease has expired (its
  holder died);
- the (question, answer) pair is recorded (`r42.turn.answer`) just before the thread append:
  a holder that died between the append and the stored reply left the answer, so the repeat
  finishes from it (appending the pair only if the thread lacks it) without running the turn
  again. The thread never holds one turn twice.

A failed turn (an apology with an error reference) stores nothing, so a repeat runs it again.

A holder can stall past its lease (a starved event loop, SIGSTOP) while another replica takes
the turn over. So before each model call the turn confirms its lease (`confirm_turn_lease`):
a holder that lost it stops there (LeaseLostError, transient) instead of asking the model the
same question a second time, and never records an answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import socket
import uuid
from collections.abc import Awaitable, Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from services.r42.ports import R42Store
from shared.bus import ChatReply, ChatRequest
from shared.errors import TransientError
from shared.store import (
    HeldLease,
    IdempotencyRepository,
    LockRepository,
    ThreadMessage,
    ThreadRepository,
    renewing,
)

log = logging.getLogger(__name__)

REPLY_SCOPE = "r42.turn.reply"
ANSWER_SCOPE = "r42.turn.answer"
LOCK_PREFIX = "r42.turn:"
REPLY_TTL_S = 24 * 3600.0
LEASE_S = 4.5
"""A dead holder's turn is taken over at most this long after its last renewal."""
POLL_S = 0.1
MAX_POLL_S = 1.0
WAIT_S = 120.0
"""How long a repeat waits for a live holder (above the turn's own 90 s bound)."""

# The lease of the turn running in this task (None outside the ledger: nothing to confirm).
_TURN_LEASE: ContextVar[HeldLease | None] = ContextVar("r42_turn_lease", default=None)


async def confirm_turn_lease() -> None:
    """Before a model call: renew this turn's lease, or raise LeaseLostError if it was lost."""
    held = _TURN_LEASE.get()
    if held is not None:
        await held.check()


class TurnStore(Protocol):
    """The repositories the ledger uses."""

    @property
    def locks(self) -> LockRepository:
        """Named leases."""
        ...

    @property
    def idempotency(self) -> IdempotencyRepository:
        """Keys of handled requests."""
        ...

    @property
    def threads(self) -> ThreadRepository:
        """Conversation memory."""
        ...


Turn = Callable[[R42Store], Awaitable[ChatReply]]
"""Runs the turn on the store it is given (whose thread appends the ledger watches)."""


def turn_key(request: ChatRequest) -> str:
    """The stored key of a request's turn: its thread, turn id and text."""
    raw = "\0".join((request.thread_key, request.turn_id or "", request.text))
    return hashlib.sha256(raw.encode()).hexdigest()[:40]


def _default_owner() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class TurnLedger:
    """Runs each turn id at most once across every replica sharing the store."""

    store: TurnStore
    lease_s: float = LEASE_S
    wait_s: float = WAIT_S
    owner: str = field(default_factory=_default_owner)

    async def run(
        self, request: ChatRequest, *, store: R42Store, turn: Turn, thread_lock: asyncio.Lock
    ) -> ChatReply:
        """The reply of this turn: stored, finished from its recorded answer, or run now.

        `thread_lock` serialises the turns of one thread in this replica; it is taken only
        to run the turn, so a repeat that finds the turn stored or running elsewhere never
        waits behind it.
        """
        if request.turn_id is None:
            async with thread_lock:
                return await turn(store)
        key = turn_key(request)
        lock = f"{LOCK_PREFIX}{key}"
        owner = f"{self.owner}:{uuid.uuid4().hex[:8]}"
        loop = asyncio.get_running_loop()
        # A repeat waits for a live holder only as long as its caller waits for it.
        deadline = loop.time() + min(self.wait_s, request.wait_s or self.wait_s)
        pause = POLL_S
        # The lease first: a new turn (the usual case) then costs one write and one read.
        while not await self.store.locks.acquire(lock, owner, ttl_s=self.lease_s):
            stored = await self.stored_reply(key)
            if stored is not None:
                return stored
            if loop.time() > deadline:
                raise TransientError("this message is still being answered; try again")
            await asyncio.sleep(pause)
            pause = min(pause * 1.5, MAX_POLL_S)  # many repeats must not crowd the store
        try:
            # A finished turn's lease is free: its stored reply is what a repeat gets.
            stored = await self.stored_reply(key)
            if stored is not None:
                return stored
            lease = HeldLease(self.store.locks, lock, owner, self.lease_s)
            async with renewing(lease) as held, thread_lock:
                answered = await self.store.idempotency.get(ANSWER_SCOPE, key)
                if answered is not None:
                    reply = await self._finish_answered(request, answered.value)
                else:
                    watched = _WatchedStore(store, _AnswerRecorder(self, request, key, held))
                    token = _TURN_LEASE.set(held)
                    try:
                        reply = await turn(cast(R42Store, watched))
                    finally:
                        _TURN_LEASE.reset(token)
            if reply.error_ref is None:
                body = {"reply": reply.model_dump(mode="json")}
                await self.store.idempotency.put_if_absent(
                    REPLY_SCOPE, key, body, ttl_s=REPLY_TTL_S
                )
            return reply
        finally:
            with contextlib.suppress(Exception):  # an expired lease is released already
                await self.store.locks.release(lock, owner)

    async def stored_reply(self, key: str) -> ChatReply | None:
        """The stored reply of a finished turn, marked as replayed."""
        record = await self.store.idempotency.get(REPLY_SCOPE, key)
        if record is None:
            return None
        reply = ChatReply.model_validate(record.value["reply"])
        return reply.model_copy(update={"replayed": True})

    async def _finish_answered(self, request: ChatRequest, value: dict[str, Any]) -> ChatReply:
        """A holder died after recording its answer: make sure the thread has it, reply it."""
        pair = [ThreadMessage.model_validate(m) for m in value["messages"]]
        thread = await self.store.threads.get(request.thread_key)
        question = pair[0]
        if not any(m.role == "user" and m.at == question.at for m in thread):
            await self.store.threads.append(request.thread_key, pair)
        log.info("turn %s of %s finished from its recorded answer", request.turn_id,
                 request.thread_key)  # fmt: skip
        answer = next((m.text for m in pair if m.role == "assistant"), "")
        return ChatReply(text=answer, replayed=True)


@dataclass(frozen=True)
class _AnswerRecorder:
    """Records a turn's (question, answer) pair right before it goes into the thread."""

    ledger: TurnLedger
    request: ChatRequest
    key: str
    held: HeldLease

    async def before_append(self, thread: str, messages: list[ThreadMessage]) -> None:
        if thread != self.request.thread_key or not any(m.role == "user" for m in messages):
            return  # the greeting that seeds an empty thread
        await self.held.check()  # a holder that stalled past its lease records nothing
        body = {"messages": [m.model_dump(mode="json") for m in messages]}
        if not await self.ledger.store.idempotency.put_if_absent(
            ANSWER_SCOPE, self.key, body, ttl_s=REPLY_TTL_S
        ):
            raise TransientError("this turn was already answered by another replica")


class _WatchedThreads:
    """The thread repository with the answer recorded before each turn's append."""

    def __init__(self, inner: ThreadRepository, recorder: _AnswerRecorder) -> None:
        self._inner = inner
        self._recorder = recorder

    async def append(self, user: str, messages: Iterable[ThreadMessage]) -> None:
        """Record the turn's pair, then append it."""
        listed = list(messages)
        await self._recorder.before_append(user, listed)
        await self._inner.append(user, listed)

    async def get(self, user: str) -> list[ThreadMessage]:
        """A user's messages, oldest first."""
        return await self._inner.get(user)

    async def clear(self, user: str) -> int:
        """Forget a user's history."""
        return await self._inner.clear(user)


class _WatchedStore:
    """The r42 store as the turn sees it: every port as is, the thread appends watched."""

    def __init__(self, inner: R42Store, recorder: _AnswerRecorder) -> None:
        self._inner = inner
        self.threads = _WatchedThreads(inner.threads, recorder)

    def __getattr__(self, name: str) -> Any:
        # Delegated by name so a port added to R42Store later needs no change here.
        return getattr(self._inner, name)
