"""Thin rpc handlers: typed request in, service call, typed reply out."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from weakref import WeakValueDictionary

from services.r42.idempotency import TurnLedger
from services.r42.knowledge import KbCache
from services.r42.ports import R42Store
from services.r42.proposals import decide_proposal
from services.r42.thread import clear_thread
from services.r42.turn import chat_turn
from shared.bus import (
    ChatReply,
    ChatRequest,
    ClearReply,
    ClearRequest,
    Event,
    ProposalDecisionReply,
    ProposalDecisionRequest,
    chunk_sink,
)

KB_SETTLE_S = 15.0
"""How long a turn that asked for a settled KB waits for the updates in flight."""


class UserLocks:
    """One lock per user id, alive while someone holds or waits for it."""

    def __init__(self) -> None:
        self._locks: WeakValueDictionary[str, asyncio.Lock] = WeakValueDictionary()

    def __call__(self, user_id: str) -> asyncio.Lock:
        """The user's lock (created on first use)."""
        lock = self._locks.get(user_id)
        if lock is None:
            lock = asyncio.Lock()
            self._locks[user_id] = lock
        return lock


@dataclass(frozen=True)
class R42Handlers:
    """The three rpc.r42.* handlers bound to one store, KB cache and publisher."""

    store: R42Store
    kb: KbCache
    publish: Callable[[Event], Awaitable[None]]
    admins: tuple[str, ...] = ()
    # Turns with a turn id run at most once across replicas (None: every request is new).
    ledger: TurnLedger | None = None
    # A user's turns run one at a time in this replica, so each sees the previous answer
    # in its history (and an empty thread is greeted once).
    user_locks: UserLocks = field(default_factory=UserLocks)

    async def chat(self, request: ChatRequest) -> ChatReply:
        """rpc.r42.chat: one turn (its text streamed when the caller asked for chunks).

        A repeat of a turn id gets the stored reply (services/r42/idempotency.py).
        """
        on_text = chunk_sink()

        async def turn(store: R42Store) -> ChatReply:
            if request.settle_kb:
                with contextlib.suppress(TimeoutError):  # then answer from what is there
                    await asyncio.wait_for(self.kb.settled(), KB_SETTLE_S)
            return await chat_turn(
                store=store, kb=self.kb, request=request, admins=self.admins, on_text=on_text
            )

        lock = self.user_locks(request.thread_key)
        if self.ledger is None:
            async with lock:
                return await turn(self.store)
        return await self.ledger.run(request, store=self.store, turn=turn, thread_lock=lock)

    async def proposal(self, request: ProposalDecisionRequest) -> ProposalDecisionReply:
        """rpc.r42.proposal: the user's Yes / No on a proposal."""
        return await decide_proposal(
            store=self.store, publish=self.publish, request=request, admins=self.admins
        )

    async def clear(self, request: ClearRequest) -> ClearReply:
        """rpc.r42.clear: wipe the thread, reseed the greeting."""
        async with self.user_locks(request.thread_key):
            return await clear_thread(store=self.store, user_id=request.thread_key)
