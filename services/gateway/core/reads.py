"""Read-only views: diagnostics (admins), a topic's neighbourhood, App Home."""

from __future__ import annotations

from datetime import timedelta

from services.gateway.core import queries
from services.gateway.core.context import CoreContext
from services.gateway.core.insights import feedback_report, frequent_questions
from services.gateway.core.models import Diagnostics, GraphView, HomeData
from services.gateway.core.week import leaderboards, quiz_status, weekly_topic_of
from shared.store import iso_week, utcnow

HOME_AUDIT_ENTRIES = 8
HOME_FEEDBACK_WEEKS = 2
HOME_GAPS = 5
FREQUENT_DAYS = 14


class ReadCalls:
    """Views over the store and the quiz service that every surface renders."""

    def __init__(self, ctx: CoreContext) -> None:
        self.ctx = ctx

    async def diagnostics(self, *, user_id: str) -> Diagnostics:
        """Recent LLM calls and cost; admins only."""
        self.ctx.require_admin(user_id, "de diagnostiek bekijken")
        return await queries.diagnostics(self.ctx.store)

    async def graph(self, query: str) -> GraphView:
        """A topic and its neighbours."""
        return await queries.graph_view(self.ctx.store, query)

    async def frequent_questions(self, *, limit: int = 2) -> list[str]:
        """Questions colleagues asked often lately (the assistant view suggests them)."""
        since = utcnow() - timedelta(days=FREQUENT_DAYS)
        return await frequent_questions(self.ctx.store, since=since, limit=limit)

    async def home(self, *, user_id: str) -> HomeData:
        """App Home for a user (admin sections only for admins)."""
        ctx, store, admin = self.ctx, self.ctx.store, self.ctx.is_admin(user_id)
        week = iso_week()
        status = await quiz_status(ctx, user_id=user_id, week=week)
        score = await store.scores.get(user_id, week)
        # The quiz service decides whether one runs; the attempt row only shows its progress.
        attempt = (
            await store.quiz_attempts.get_active_attempt(user_id) if status.quiz_active else None
        )
        return HomeData(
            weekly=weekly_topic_of(status),
            attempt=attempt,
            week_points=score.points if score else 0,
            leaderboards=await leaderboards(ctx, limit=5, week=week),
            pending=await store.suggestions.list(status="pending", limit=10) if admin else None,
            running=await queries.running_sources(store) if admin else None,
            week_cost_usd=(await queries.diagnostics(store, recent=0)).week_cost_usd
            if admin
            else None,
            audit=await store.audit.latest(limit=HOME_AUDIT_ENTRIES) if admin else None,
            feedback=await feedback_report(store, weeks=HOME_FEEDBACK_WEEKS, gaps=HOME_GAPS)
            if admin
            else None,
        )
