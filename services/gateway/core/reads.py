"""Read-only views: diagnostics (admins), a topic's neighbourhood, App Home."""

from __future__ import annotations

from services.gateway.core import queries
from services.gateway.core.context import CoreContext
from services.gateway.core.models import Diagnostics, GraphView, HomeData


class ReadCalls:
    """Views over the store that every surface renders."""

    def __init__(self, ctx: CoreContext) -> None:
        self.ctx = ctx

    async def diagnostics(self, *, user_id: str) -> Diagnostics:
        """Recent LLM calls and cost; admins only."""
        self.ctx.require_admin(user_id, "de diagnostiek bekijken")
        return await queries.diagnostics(self.ctx.store)

    async def graph(self, query: str) -> GraphView:
        """A topic and its neighbours."""
        return await queries.graph_view(self.ctx.store, query)

    async def home(self, *, user_id: str) -> HomeData:
        """App Home for a user (admin sections only for admins)."""
        return await queries.home_data(
            self.ctx.store, user_id=user_id, admin=self.ctx.is_admin(user_id)
        )
