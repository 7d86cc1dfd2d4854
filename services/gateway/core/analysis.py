"""Graph analysis for admins: ask the KG owner for a plan, apply a selection, undo it."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from services.gateway.core.context import CoreContext
from shared.bus import request
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
from shared.errors import BadInputError, BusError

ANALYZE_TIMEOUT_S = 300.0  # a reasoning-tier call over the whole graph, with retries
APPLY_TIMEOUT_S = 60.0
NOT_SERVED = "de kennisgraaf-service (extractor) draait niet; start R42 met `r42 up`"


class AnalysisCalls:
    """Every call is for admins only (checked here and again by the KG owner)."""

    def __init__(self, ctx: CoreContext) -> None:
        self.ctx = ctx

    async def analyze(self, *, user_id: str) -> GraphPlanReply:
        """A stored plan of clean-up actions (nothing changes yet)."""
        self.ctx.require_admin(user_id, "de kennisgraaf analyseren")
        return await self._call(
            GRAPH_ANALYZE_SUBJECT, GraphAnalyzeRequest(user_id=user_id), GraphPlanReply,
            wait_s=ANALYZE_TIMEOUT_S,
        )  # fmt: skip

    async def apply(
        self, *, user_id: str, plan_id: str, keys: Sequence[str], max_deletions: int | None = None
    ) -> GraphApplyReply:
        """Apply the chosen actions of a plan; BadInputError when none are chosen."""
        self.ctx.require_admin(user_id, "de kennisgraaf wijzigen")
        if not keys:
            raise BadInputError("kies minstens één actie om toe te passen")
        try:
            req = GraphApplyRequest(
                user_id=user_id, plan_id=plan_id, keys=list(keys), max_deletions=max_deletions
            )
        except ValueError:
            raise BadInputError("dit plan of deze selectie is ongeldig") from None
        return await self._call(GRAPH_APPLY_SUBJECT, req, GraphApplyReply, wait_s=APPLY_TIMEOUT_S)

    async def undo(self, *, user_id: str, undo_id: str) -> GraphUndoReply:
        """Undo an applied change."""
        self.ctx.require_admin(user_id, "wijzigingen ongedaan maken")
        try:
            req = GraphUndoRequest(user_id=user_id, undo_id=undo_id)
        except ValueError:
            raise BadInputError("ongeldige wijziging om ongedaan te maken") from None
        return await self._call(GRAPH_UNDO_SUBJECT, req, GraphUndoReply, wait_s=APPLY_TIMEOUT_S)

    async def _call[R: BaseModel](
        self, subject: str, req: BaseModel, model: type[R], *, wait_s: float
    ) -> R:
        try:
            return await request(
                self.ctx.broker, subject, req, response_model=model, timeout=wait_s,
                namespace=self.ctx.namespace,
            )  # fmt: skip
        except BusError as exc:
            if "no service is answering" in str(exc):
                raise BusError(NOT_SERVED) from None
            raise
