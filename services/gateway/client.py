"""The gateway's client layer: every feature as one call, for the Slack app and the console.

Chat, learning content and the quiz are here; sources, reviews and reads come from
AdminCalls (client_admin.py), the connections and the admin check from ClientBase.

Bus calls (chat, proposals, content, quiz, sources, decisions) and store reads live here,
so Slack and the terminal behave the same. Admin-only calls check the server-side admin
list here, not in the adapters.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

from services.gateway import queries
from services.gateway.client_admin import AdminCalls
from services.gateway.client_base import ForbiddenError, new_request_id
from services.gateway.models import (
    Leaderboards,
    WeeklyTopic,
)
from shared.bus import (
    CHAT_SUBJECT,
    CLEAR_SUBJECT,
    PROPOSAL_SUBJECT,
    ChatReply,
    ChatRequest,
    ClearReply,
    ClearRequest,
    ContentRequested,
    ContentType,
    ProposalDecisionReply,
    ProposalDecisionRequest,
    QuizAnswered,
    QuizRequested,
    derived_event_id,
    request,
)
from shared.bus.content_rpc import (
    MAX_INSTRUCTION_CHARS,
    REFINE_SUBJECT,
    RefineReply,
    RefineRequest,
)
from shared.errors import BadInputError, NotFoundError
from shared.store import iso_week

log = logging.getLogger(__name__)

MAX_CHAT_CHARS = 200_000
CANCELLABLE = frozenset({"pending", "processing"})


class GatewayClient(AdminCalls):
    """Chat, learning, quiz, sources and reviews over the bus and the store."""

    # -- chat ---------------------------------------------------------------------------

    async def quiz_active(self, user_id: str) -> bool:
        """Whether the user is in the middle of a quiz (R42 stays silent then)."""
        return await self.store.quiz_attempts.get_active_attempt(user_id) is not None

    async def chat(
        self, *, user_id: str, text: str, user_name: str = "", correlation_id: str | None = None
    ) -> ChatReply:
        """One chat turn with R42."""
        req = ChatRequest(
            user_id=user_id,
            user_name=user_name[:200],
            is_admin=self.is_admin(user_id),
            text=text[:MAX_CHAT_CHARS],
            correlation_id=correlation_id,
        )
        return await request(
            self.broker,
            CHAT_SUBJECT,
            req,
            response_model=ChatReply,
            timeout=self.chat_timeout,
            namespace=self.namespace,
        )

    async def decide_proposal(
        self, *, proposal_id: str, user_id: str, accept: bool
    ) -> ProposalDecisionReply:
        """A Yes / No on a proposal chip (admins apply; others queue a suggestion)."""
        req = ProposalDecisionRequest(
            proposal_id=proposal_id, user_id=user_id, is_admin=self.is_admin(user_id), accept=accept
        )
        return await request(
            self.broker,
            PROPOSAL_SUBJECT,
            req,
            response_model=ProposalDecisionReply,
            timeout=30.0,
            namespace=self.namespace,
        )

    async def clear(self, *, user_id: str) -> ClearReply:
        """Wipe the user's conversation with R42."""
        return await request(
            self.broker,
            CLEAR_SUBJECT,
            ClearRequest(user_id=user_id),
            response_model=ClearReply,
            timeout=15.0,
            namespace=self.namespace,
        )

    async def feedback(self, *, user_id: str, turn_id: str, positive: bool, where: str) -> None:
        """Store a 👍 / 👎 on an answer (one per user per answer; the last click counts)."""
        if not turn_id or len(turn_id) > 200:
            raise BadInputError("feedback without a valid answer reference")
        await self.store.settings.set(
            f"feedback:{turn_id}:{user_id}",
            {
                "positive": positive,
                "user": user_id,
                "turn": turn_id,
                "where": where,
                "at": datetime.now(UTC).isoformat(),
            },
        )

    # -- learning -----------------------------------------------------------------------

    async def weekly_topic(self, user_id: str) -> WeeklyTopic:
        """This week's topic of the user; NotFoundError when the graph has none yet."""
        found = await queries.find_weekly_topic(self.store, user_id=user_id)
        if found is None:
            raise NotFoundError("er is nog geen onderwerp: de kennisgraaf is leeg")
        return found

    async def request_content(
        self,
        *,
        user_id: str,
        topic_id: str,
        kind: ContentType,
        reply_to: dict[str, Any],
        force: bool = False,
    ) -> ContentRequested:
        """Ask the content service for a topic's content; content.ready answers later."""
        event = ContentRequested(
            actor=user_id,
            user_id=user_id,
            topic_id=topic_id,
            content_type=kind,
            force=force,
            reply_to={"request_id": new_request_id(), **reply_to},
        )
        await self._publish(event)
        return event

    async def refine(self, *, topic_id: str, instructions: str, user_id: str) -> RefineReply:
        """An admin's small patch to a topic's article (rpc.content.refine)."""
        self.require_admin(user_id, "artikelen verfijnen")
        if not instructions.strip():
            raise BadInputError("schrijf op wat er anders moet")
        req = RefineRequest(
            topic=topic_id,
            instruction=instructions.strip()[:MAX_INSTRUCTION_CHARS],
            user_id=user_id,
            is_admin=True,
        )
        return await request(
            self.broker,
            REFINE_SUBJECT,
            req,
            response_model=RefineReply,
            timeout=self.chat_timeout,
            namespace=self.namespace,
        )

    # -- quiz ---------------------------------------------------------------------------

    async def start_quiz(self, *, user_id: str, reply_to: dict[str, Any]) -> QuizRequested:
        """Ask for this week's quiz; quiz.ready brings the first question."""
        event = QuizRequested(
            actor=user_id,
            user_id=user_id,
            week=iso_week(),
            reply_to={"request_id": new_request_id(), **reply_to},
        )
        await self._publish(event)
        return event

    async def answer_quiz(
        self,
        *,
        attempt_id: str,
        user_id: str,
        question_index: int,
        choice_index: int,
        reply_to: dict[str, Any],
    ) -> QuizAnswered:
        """Answer one question of the user's own attempt; quiz.scored answers later."""
        attempt = await self.store.quiz_attempts.get(attempt_id)
        if attempt is None or attempt.user != user_id:
            raise BadInputError("deze quiz is niet van jou")
        if attempt.status != "active":
            raise BadInputError("deze quiz is al afgelopen")
        event = QuizAnswered(
            # One event per question: a double click is dropped by JetStream's dedupe.
            event_id=derived_event_id(QuizAnswered.SUBJECT, attempt_id, str(question_index)),
            actor=user_id,
            attempt_id=attempt_id,
            user_id=user_id,
            question_index=question_index,
            choice_index=choice_index,
            reply_to={"request_id": new_request_id(), **reply_to},
        )
        await self._publish(event)
        return event

    async def leaderboards(self, *, limit: int = 10) -> Leaderboards:
        """Weekly and all-time rankings."""
        return await queries.leaderboards(self.store, limit=limit)


__all__ = ["ForbiddenError", "GatewayClient", "new_request_id"]
