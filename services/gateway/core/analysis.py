"""Graph analysis for admins: ask the KG owner for a plan, apply a selection, undo it.

Every call is for admins only (checked here, and again by the KG owner); each action and
each refused attempt goes into the audit trail.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from services.gateway.core.audit import audit
from services.gateway.core.context import CoreContext
from shared.bus import NoResponderError, request
from shared.bus.graph_rpc import (
    GRAPH_ANALYZE_SUBJECT,
    GRAPH_APPLY_SUBJECT,
    GRAPH_UNDO_SUBJECT,
    GraphAnalyzeRequest,
    GraphApplyReply,
    GraphApplyRequest,
    GraphPlanReply,
    GraphUndoReply,
    GraphUndoRequest,
)
from shared.errors import BadInputError, BusError, R42Error
from shared.store import AuditSurface

ANALYZE_TIMEOUT_S = 300.0  # a reasoning-tier call over the whole graph, with retries
APPLY_TIMEOUT_S = 60.0
NOT_SERVED = "de kennisgraaf-service (extractor) draait niet; start R42 met `r42 up`"


class AnalysisCalls:
    """analyze, apply, undo and discard of graph-analysis plans."""

    def __init__(self, ctx: CoreContext) -> None:
        self.ctx = ctx

    async def _admin(
        self, user_id: str, action: str, target: str, what: str, surface: AuditSurface
    ) -> None:
        """ForbiddenError (audited as refused) unless the user is an admin."""
        if not self.ctx.is_admin(user_id):
            await audit(self.ctx, actor=user_id, action=action, target=target, allowed=False,
                        surface=surface, after={"outcome": "refused"})  # fmt: skip
        self.ctx.require_admin(user_id, what)

    async def analyze(self, *, user_id: str, surface: AuditSurface) -> GraphPlanReply:
        """A stored plan of clean-up actions (nothing changes yet)."""
        await self._admin(user_id, "graph.analyze", "graph", "de kennisgraaf analyseren", surface)
        plan = await self._call(
            GRAPH_ANALYZE_SUBJECT, GraphAnalyzeRequest(user_id=user_id), GraphPlanReply,
            wait_s=ANALYZE_TIMEOUT_S,
        )  # fmt: skip
        await audit(self.ctx, actor=user_id, action="graph.analyze",
                    target=plan.plan_id or "graph", allowed=True, surface=surface,
                    after={"actions": len(plan.actions), "skipped": len(plan.skipped)})  # fmt: skip
        return plan

    async def apply(
        self, *, user_id: str, plan_id: str, keys: Sequence[str], surface: AuditSurface,
        max_deletions: int | None = None,
    ) -> GraphApplyReply:  # fmt: skip
        """Apply the chosen actions of a plan; BadInputError when none are chosen."""
        await self._admin(user_id, "graph.apply", plan_id, "de kennisgraaf wijzigen", surface)
        if not keys:
            raise BadInputError("kies minstens één actie om toe te passen")
        try:
            req = GraphApplyRequest(
                user_id=user_id, plan_id=plan_id, keys=list(keys), max_deletions=max_deletions
            )
        except ValueError:
            raise BadInputError("dit plan of deze selectie is ongeldig") from None
        before = {"plan_id": plan_id, "keys": list(keys)}
        try:
            reply = await self._call(
                GRAPH_APPLY_SUBJECT, req, GraphApplyReply, wait_s=APPLY_TIMEOUT_S
            )
        except R42Error as exc:
            await audit(self.ctx, actor=user_id, action="graph.apply", target=plan_id,
                        allowed=True, surface=surface, before=before,
                        after={"outcome": "failed", "error": str(exc)[:500]})  # fmt: skip
            raise
        await audit(self.ctx, actor=user_id, action="graph.apply", target=plan_id, allowed=True,
                    surface=surface, before=before, after=reply.model_dump())  # fmt: skip
        return reply

    async def undo(self, *, user_id: str, undo_id: str, surface: AuditSurface) -> GraphUndoReply:
        """Undo an applied change."""
        await self._admin(user_id, "graph.undo", undo_id, "wijzigingen ongedaan maken", surface)
        try:
            req = GraphUndoRequest(user_id=user_id, undo_id=undo_id)
        except ValueError:
            raise BadInputError("ongeldige wijziging om ongedaan te maken") from None
        reply = await self._call(GRAPH_UNDO_SUBJECT, req, GraphUndoReply, wait_s=APPLY_TIMEOUT_S)
        await audit(self.ctx, actor=user_id, action="graph.undo", target=undo_id, allowed=True,
                    surface=surface, after=reply.model_dump())  # fmt: skip
        return reply

    async def discard(self, *, user_id: str, plan_id: str, surface: AuditSurface) -> None:
        """Close a plan without applying it (it expires in the store)."""
        await self._admin(user_id, "graph.discard", plan_id, "een plan verwerpen", surface)
        await audit(self.ctx, actor=user_id, action="graph.discard", target=plan_id,
                    allowed=True, surface=surface)  # fmt: skip

    async def _call[R: BaseModel](
        self, subject: str, req: BaseModel, model: type[R], *, wait_s: float
    ) -> R:
        try:
            return await request(
                self.ctx.broker, subject, req, response_model=model, timeout=wait_s,
                namespace=self.ctx.namespace,
            )  # fmt: skip
        except NoResponderError:
            raise BusError(NOT_SERVED) from None
