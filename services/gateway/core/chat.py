"""Chat with R42: one turn, a Yes / No on a proposal, clearing a conversation."""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Awaitable, Callable, Sequence

from services.gateway.core.chat_retry import ask_r42
from services.gateway.core.context import CoreContext
from services.gateway.core.week import quiz_status
from shared.bus import (
    CLEAR_SUBJECT,
    PROPOSAL_SUBJECT,
    ChatReply,
    ChatRequest,
    ClearReply,
    ClearRequest,
    ProposalDecisionReply,
    ProposalDecisionRequest,
    ThreadNote,
    request,
)
from shared.bus.chat import CONVERSATION_PATTERN, TURN_ID_PATTERN
from shared.errors import BadInputError

MAX_CHAT_CHARS = 200_000


def _checked_conversation(conversation: str) -> str:
    if not re.fullmatch(CONVERSATION_PATTERN, conversation):
        raise BadInputError("onbekend gesprek")
    return conversation


def _wire_turn_id(turn_id: str) -> str:
    # A platform's id of another shape (spaces, non-ASCII, too long) still names one message.
    if re.fullmatch(TURN_ID_PATTERN, turn_id):
        return turn_id
    return hashlib.sha256(turn_id.encode()).hexdigest()[:40]


class ChatCalls:
    """R42's chat rpc calls (rpc.r42.*)."""

    def __init__(self, ctx: CoreContext) -> None:
        self.ctx = ctx

    async def quiz_active(self, user_id: str) -> bool:
        """Whether the user is in the middle of a quiz (R42 only says so then)."""
        return (await quiz_status(self.ctx, user_id=user_id)).quiz_active

    async def ask(
        self,
        *,
        user_id: str,
        text: str,
        conversation: str = "",
        user_name: str = "",
        correlation_id: str | None = None,
        on_text: Callable[[str], Awaitable[None]] | None = None,
        turn_id: str | None = None,
        settle_kb: bool = False,
        thread: Sequence[ThreadNote] = (),
    ) -> ChatReply:
        """One chat turn with R42 in one conversation (each has its own memory).

        With `on_text` the answer's text arrives there in order as R42 writes it; the reply
        still carries the whole answer with its sources. `turn_id` is the surface's id of the
        message (Slack's client_msg_id, a Teams activity id; a fresh uuid when not given): a
        lost reply is asked for again with it, and R42 answers each id once.
        """
        ctx = self.ctx
        req = ChatRequest(
            user_id=user_id,
            user_name=user_name[:200],
            text=text[:MAX_CHAT_CHARS],
            correlation_id=correlation_id,
            conversation=_checked_conversation(conversation),
            turn_id=_wire_turn_id(turn_id) if turn_id else uuid.uuid4().hex,
            settle_kb=settle_kb,
            thread=list(thread),
        )
        return await ask_r42(
            ctx.broker, req, timeout=ctx.chat_timeout, namespace=ctx.namespace, on_text=on_text
        )

    async def decide_proposal(
        self, *, proposal_id: str, user_id: str, accept: bool
    ) -> ProposalDecisionReply:
        """A Yes / No on a proposal chip (admins apply; others queue a suggestion)."""
        ctx = self.ctx
        req = ProposalDecisionRequest(proposal_id=proposal_id, user_id=user_id, accept=accept)
        return await request(
            ctx.broker,
            PROPOSAL_SUBJECT,
            req,
            response_model=ProposalDecisionReply,
            timeout=30.0,
            namespace=ctx.namespace,
        )

    async def clear(self, *, user_id: str, conversation: str = "") -> ClearReply:
        """Wipe one conversation of the user with R42."""
        return await request(
            self.ctx.broker,
            CLEAR_SUBJECT,
            ClearRequest(user_id=user_id, conversation=_checked_conversation(conversation)),
            response_model=ClearReply,
            timeout=15.0,
            namespace=self.ctx.namespace,
        )
