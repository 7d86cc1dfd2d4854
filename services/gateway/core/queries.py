"""Read-only views over the store: running sources, diagnostics, a topic's neighbourhood."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from services.gateway.core.models import Diagnostics, GraphView
from shared.errors import BadInputError, NotFoundError
from shared.kb import match_label
from shared.store import Source, Store, Topic

RUNNING = ("pending", "processing")


def week_start(now: datetime | None = None) -> datetime:
    """Monday 00:00 UTC of the ISO week containing `now`."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    monday = now - timedelta(days=now.isoweekday() - 1)
    return monday.replace(hour=0, minute=0, second=0, microsecond=0)


async def running_sources(store: Store) -> list[Source]:
    """Sources still being extracted, newest first."""
    found: list[Source] = []
    for status in RUNNING:
        found += await store.sources.list(status=status, limit=50)  # type: ignore[arg-type]
    return sorted(
        found, key=lambda s: s.created_at or datetime.min.replace(tzinfo=UTC), reverse=True
    )


async def diagnostics(store: Store, *, recent: int = 15) -> Diagnostics:
    """Recent LLM calls plus this week's totals per task."""
    by_task = await store.llm_calls.aggregate(by="task", since=week_start())
    return Diagnostics(
        recent=await store.llm_calls.last(recent),
        by_task=by_task,
        week_calls=sum(a.calls for a in by_task),
        week_errors=sum(a.errors for a in by_task),
        week_cost_usd=sum(a.cost_usd for a in by_task),
        total_calls=await store.llm_calls.count(),
    )


async def find_topic(store: Store, query: str) -> Topic:
    """A topic by id, else by label (exact, then prefix, then contains), folded for accents."""
    query = query.strip()
    if not query:
        raise BadInputError("noem een onderwerp, bijvoorbeeld `/r42 graph onboarding`")
    if len(query) > 300:
        raise BadInputError("de onderwerpnaam is te lang")
    if (topic := await store.topics.get(query)) is not None:
        return topic
    if (found := match_label(await store.topics.list(), query)) is not None:
        return found
    raise NotFoundError(f"geen onderwerp gevonden voor '{query}'")


async def graph_view(store: Store, query: str, *, limit: int = 40) -> GraphView:
    """A topic and its neighbours (relation type, outgoing?, neighbour)."""
    topic = await find_topic(store, query)
    relations = await store.relations.list(topic_id=topic.id)
    other_ids = {r.target if r.source == topic.id else r.source for r in relations}
    others = {t.id: t for t in await store.topics.get_many(other_ids)}
    neighbours: list[tuple[str, bool, Topic]] = []
    for r in relations[:limit]:
        outgoing = r.source == topic.id
        other = others.get(r.target if outgoing else r.source)
        if other is not None:
            neighbours.append((r.type, outgoing, other))
    return GraphView(topic=topic, neighbours=neighbours)
