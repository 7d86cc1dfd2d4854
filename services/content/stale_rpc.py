"""Serves `rpc.content.stale` and `rpc.content.regenerate` (shared/bus/stale_rpc.py) for admins.

Admin status is the service's own admin list (R42_ADMINS), never a request field.
"""

from __future__ import annotations

from collections.abc import Collection

from services.content.ports import ContentStore
from services.content.stale import find_stale, regenerate_parts
from shared.bus.stale_rpc import (
    RegeneratedTopic,
    RegenerateReply,
    RegenerateRequest,
    StaleListReply,
    StaleListRequest,
    StalePart,
)
from shared.errors import BadInputError


def _require_admin(user_id: str, admins: Collection[str]) -> None:
    if user_id not in admins:
        raise BadInputError("alleen beheerders mogen verouderde inhoud bekijken of vernieuwen")


async def answer_stale(
    request: StaleListRequest, *, store: ContentStore, admins: Collection[str]
) -> StaleListReply:
    """Every stale part with its reasons."""
    _require_admin(request.user_id, admins)
    items = await find_stale(store)
    labels = {t.id: t.label for t in await store.topics.list()}
    return StaleListReply(
        parts=[
            StalePart(
                part=f"{i.topic_id}|{i.kind}",
                topic_id=i.topic_id,
                kind=i.kind,
                label=labels.get(i.topic_id, ""),
                reasons=list(i.reasons),
                refined=i.refined,
            )
            for i in items[:200]
        ]
    )


async def answer_regenerate(
    request: RegenerateRequest, *, store: ContentStore, admins: Collection[str]
) -> RegenerateReply:
    """Regenerate the chosen parts; each topic reports what it made or why not."""
    _require_admin(request.user_id, admins)
    parts = [tuple(p.split("|", 1)) for p in request.parts if "|" in p]
    results = await regenerate_parts(store, [(t, k) for t, k in parts])
    return RegenerateReply(
        topics=[
            RegeneratedTopic(topic_id=r.topic_id, kinds=list(r.kinds), error=(r.error or "")[:500])
            for r in results
        ]
    )
