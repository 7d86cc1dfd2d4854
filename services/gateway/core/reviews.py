"""Reviews of knowledge-graph suggestions: the pending list and Approve / Reject (admins)."""

from __future__ import annotations

import logging
from typing import Literal

from services.gateway.core.context import CoreContext
from services.gateway.core.models import SuggestionDecision
from shared.bus import KbDelta, KbDeltaDecided, derived_event_id
from shared.store import Suggestion

log = logging.getLogger(__name__)


class ReviewCalls:
    """Suggestion reviews; the extractor (the graph's one writer) applies decisions."""

    def __init__(self, ctx: CoreContext) -> None:
        self.ctx = ctx

    async def pending(self, *, user_id: str) -> list[Suggestion]:
        """Suggestions waiting for a decision; admins only."""
        self.ctx.require_admin(user_id, "voorstellen bekijken")
        return await self.ctx.store.suggestions.list(status="pending", limit=50)

    async def decide(
        self, *, suggestion_id: str, user_id: str, approve: bool
    ) -> SuggestionDecision:
        """Approve / Reject (admins only): publish kb.delta.decided for the extractor to apply.

        The extractor, the graph's one writer, applies it and marks the suggestion decided.
        The event id is derived from the suggestion, so when two admins click at once
        JetStream keeps the first decision and reports the second as a duplicate.
        """
        if not self.ctx.is_admin(user_id):
            return SuggestionDecision(status="forbidden")
        suggestion = await self.ctx.store.suggestions.get(suggestion_id)
        if suggestion is None:
            return SuggestionDecision(status="not_found")
        if suggestion.status != "pending":
            return SuggestionDecision(
                status="already_decided",
                suggestion=suggestion,
                decision=suggestion.status,
                decided_by=suggestion.decided_by,
            )
        decision: Literal["approved", "rejected"] = "approved" if approve else "rejected"
        event = KbDeltaDecided(
            event_id=derived_event_id(KbDeltaDecided.SUBJECT, suggestion.id),
            correlation_id=str(suggestion.context.get("proposal_id") or suggestion.id)[:200],
            actor=user_id,
            suggestion_id=suggestion.id,
            decision=decision,
            decided_by=user_id,
            delta=KbDelta.model_validate(suggestion.delta),
        )
        ack = await self.ctx.publish(event)
        if ack.duplicate:
            log.info("suggestion %s: a decision was already published", suggestion.id)
            return SuggestionDecision(status="already_decided", suggestion=suggestion)
        return SuggestionDecision(
            status="decided", suggestion=suggestion, decision=decision, decided_by=user_id
        )

    async def get(self, suggestion_id: str) -> Suggestion | None:
        """One suggestion (None when it does not exist)."""
        return await self.ctx.store.suggestions.get(suggestion_id)
