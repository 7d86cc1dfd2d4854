"""Wiring of the r42 service: KB cache, rpc responders, the kb.updated watch, offline plans."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from services.r42.handlers import R42Handlers
from services.r42.idempotency import TurnLedger
from services.r42.knowledge import KbCache
from services.r42.offline import offline_plans
from services.r42.snapshot import share_the_gil
from services.r42.warmup import warm_retrieval
from shared.bus import (
    CHAT_SUBJECT,
    CLEAR_SUBJECT,
    PROPOSAL_SUBJECT,
    ChatRequest,
    ClearRequest,
    KbUpdated,
    ProposalDecisionRequest,
)
from shared.errors import R42Error
from shared.runtime.service import Broadcast, Rpc, ServiceContext, ServiceSpec

log = logging.getLogger(__name__)

CHAT_CONCURRENCY = 32


@dataclass(frozen=True)
class R42Deps:
    """The r42 service's KB cache and rpc handlers."""

    kb: KbCache
    handlers: R42Handlers


def kb_of(ctx: ServiceContext) -> KbCache:
    """The KB cache of an r42 service running on `ctx`."""
    deps = ctx.spec.deps if ctx.spec is not None else None
    if not isinstance(deps, R42Deps):
        raise R42Error("the r42 service is not running on this service context")
    return deps.kb


def build(ctx: ServiceContext) -> ServiceSpec[R42Deps]:
    """rpc.r42.{chat,proposal,clear}; every replica applies every kb.updated to its snapshot."""
    share_the_gil()  # turns' store reads beside a rebuild on the loop
    kb = KbCache(ctx.store)
    handlers = R42Handlers(
        store=ctx.store,
        kb=kb,
        publish=ctx.publish,
        admins=tuple(ctx.settings.admins),
        ledger=TurnLedger(ctx.store),
    )

    background: set[asyncio.Task[float]] = set()

    async def on_kb_updated(event: KbUpdated) -> None:
        kb.update(event)  # applied incrementally in the background

    async def warm() -> None:
        kb.warm()
        # The search path's one-off costs are paid beside the first events, not by a turn.
        warming = asyncio.create_task(_warm_search(kb))
        background.add(warming)  # a task nobody holds may be collected before it ends
        warming.add_done_callback(background.discard)
        warming.add_done_callback(_warmed)

    # kb.updated is heard on core NATS without a queue group: every replica gets every
    # event, and no consumer state is left on the server when a replica goes away.
    return ServiceSpec(
        deps=R42Deps(kb=kb, handlers=handlers),
        rpc=[
            Rpc(CHAT_SUBJECT, ChatRequest, handlers.chat, max_concurrency=CHAT_CONCURRENCY),
            Rpc(PROPOSAL_SUBJECT, ProposalDecisionRequest, handlers.proposal),
            Rpc(CLEAR_SUBJECT, ClearRequest, handlers.clear),
        ],
        broadcasts=[Broadcast(KbUpdated, on_kb_updated)],
        on_started=[warm],
        closers=[kb.aclose],
        offline_plans=offline_plans(lambda: kb.current),
    )


async def _warm_search(kb: KbCache) -> float:
    """One search of the first snapshot (its first topic's label), in a worker thread."""
    snapshot = await kb.get()
    first = next(iter(snapshot.topics.values()), None)
    return await asyncio.to_thread(warm_retrieval, snapshot.index, first.label if first else "")


def _warmed(task: asyncio.Task[float]) -> None:
    """A failed warm-up costs only speed: say so, never fail the service for it."""
    if not task.cancelled() and task.exception() is not None:
        log.warning("search warm-up failed: %s", type(task.exception()).__name__)
