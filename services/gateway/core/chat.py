"""Chat with R42: one turn, a Yes / No on a proposal, clearing a conversation."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from services.gateway.core.context import CoreContext
from services.gateway.core.week import quiz_status
from shared.bus import (
    CHAT_SUBJECT,
    CLEAR_SUBJECT,
    PROPOSAL_SUBJECT,
    ChatReply,
    ChatRequest,
    ClearReply,
    ClearRequest,
    ProposalDecisionReply,
    ProposalDecisionRequest,
    request,
    request_stream,
)
from shared.bus.chat import CONVERSATION_PATTERN
from shared.errors import BadInputError

MAX_CHAT_CHARS = 200_000


def _checked_conversation(conversation: str) -> str:
    if not re.fullmatch(CONVERSATION_PATTERN, conversation):
        raise BadInputError("onbekend gesprek")
    return conversation


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
    ) -> ChatReply:
        """One chat turn with R42 in one conversation (each has its own memory).

        With `on_text` the answer's text arrives there in order as R42 writes it; the reply
        still carries the whole answer with its sources.
        """
        ctx = self.ctx
        req = ChatRequest(
            user_id=user_id,
            user_name=user_name[:200],
            text=text[:MAX_CHAT_CHARS],
            correlation_id=correlation_id,
            conversation=_checked_conversation(conversation),
        )
        if on_text is not None:
            return await request_stream(
                ctx.broker,
                CHAT_SUBJECT,
                req,
                response_model=ChatReply,
                on_chunk=on_text,
                timeout=ctx.chat_timeout,
                namespace=ctx.namespace,
            )
        return await request(
            ctx.broker,
            CHAT_SUBJECT,
            req,
            response_model=ChatReply,
            timeout=ctx.chat_timeout,
            namespace=ctx.namespace,
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
