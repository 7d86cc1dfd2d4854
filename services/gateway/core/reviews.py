"""Reviews of knowledge-graph suggestions: the pending list, Approve / Reject and the outcome."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Literal

from services.gateway.core.audit import audit
from services.gateway.core.context import CoreContext
from services.gateway.core.models import SuggestionDecision
from services.gateway.core.waiter import EventWaiter
from shared.bus import KbDelta, KbDeltaApplied, KbDeltaDecided, derived_event_id
from shared.store import AuditSurface, Suggestion

log = logging.getLogger(__name__)

# How long a click waits for the KG owner's report before saying it is still queued.
OUTCOME_TIMEOUT_S = 30.0

Outcome = Callable[[float], Awaitable[KbDeltaApplied | None]]


class ReviewCalls:
    """Suggestion reviews; the extractor (the graph's one writer) applies decisions."""

    def __init__(self, ctx: CoreContext) -> None:
        self.ctx = ctx
        self._waiter: EventWaiter | None = None
        self._waiter_lock = asyncio.Lock()

    async def pending(self, *, user_id: str) -> list[Suggestion]:
        """Suggestions waiting for a decision; admins only."""
        self.ctx.require_admin(user_id, "voorstellen bekijken")
        return await self.ctx.store.suggestions.list(status="pending", limit=50)

    async def listed(self, ids: Sequence[str]) -> list[Suggestion]:
        """The suggestions of a shown list, in its order (vanished ones left out)."""
        found = [await self.ctx.store.suggestions.get(i) for i in ids]
        return [s for s in found if s is not None]

    async def decide(
        self, *, suggestion_id: str, user_id: str, approve: bool, surface: AuditSurface
    ) -> SuggestionDecision:
        """Approve / Reject (admins only): publish kb.delta.decided for the extractor to apply.

        The extractor, the graph's one writer, applies it, marks the suggestion decided and
        reports kb.delta.applied. The event id is derived from the suggestion, so when two
        admins click at once JetStream keeps the first decision and reports the second as a
        duplicate. Every decision, and every refused attempt, is audited.
        """
        action = "suggestion.approve" if approve else "suggestion.reject"
        if not self.ctx.is_admin(user_id):
            log.warning("non-admin %s tried to decide suggestion %s", user_id, suggestion_id)
            await audit(self.ctx, actor=user_id, action=action, target=suggestion_id,
                        allowed=False, surface=surface, after={"outcome": "refused"})  # fmt: skip
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
        await audit(self.ctx, actor=user_id, action=action, target=suggestion.id, allowed=True,
                    surface=surface, before={"status": "pending", "delta": suggestion.delta},
                    after={"decision": decision})  # fmt: skip
        return SuggestionDecision(
            status="decided", suggestion=suggestion, decision=decision, decided_by=user_id
        )

    @contextlib.asynccontextmanager
    async def outcome(self, suggestion_id: str) -> AsyncIterator[Outcome]:
        """Watch for the KG owner's report on a suggestion (open it before deciding)."""
        waiter = await self._tap()
        async with waiter.watch(suggestion_id) as queue:

            async def wait(timeout: float) -> KbDeltaApplied | None:  # noqa: ASYNC109
                try:
                    event = await asyncio.wait_for(queue.get(), timeout)
                except TimeoutError:
                    return None
                return event if isinstance(event, KbDeltaApplied) else None

            yield wait

    async def _tap(self) -> EventWaiter:
        async with self._waiter_lock:
            if self._waiter is None:
                waiter = EventWaiter(self.ctx.broker, namespace=self.ctx.namespace)
                await waiter.start({KbDeltaApplied: lambda e: e.suggestion_id})
                self._waiter = waiter
            return self._waiter

    async def close(self) -> None:
        """Stop watching for outcomes."""
        if self._waiter is not None:
            await self._waiter.close()
            self._waiter = None

    async def get(self, suggestion_id: str) -> Suggestion | None:
        """One suggestion (None when it does not exist)."""
        return await self.ctx.store.suggestions.get(suggestion_id)
