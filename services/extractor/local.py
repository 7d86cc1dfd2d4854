"""Running sources without a bus (the CLI when no stack runs) and following them on one."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from typing import Any

from services.extractor.cancel import SourceTasks
from services.extractor.config import ExtractOptions
from services.extractor.merge import merge_chunk
from services.extractor.outcomes import in_flow, mark_cancelled
from services.extractor.pipeline import ExtractResult
from services.extractor.ports import ExtractorStore
from services.extractor.runner import run_source
from shared.bus import (
    ChunkExtracted,
    Event,
    SourceCancelled,
    SourceCompleted,
    SourceFailed,
    SourceProgress,
    ns_subject,
    parse_event,
    subscriptions_settled,
)
from shared.errors import BadInputError
from shared.llm import Limiter

log = logging.getLogger(__name__)

Observer = Callable[[Event], None]
FOLLOWED = (SourceProgress, SourceCompleted, SourceFailed, SourceCancelled)


class LocalBus:
    """In-process dispatch: chunk.extracted goes straight to the merge step, in order."""

    def __init__(self, store: ExtractorStore, observer: Observer | None = None) -> None:
        self._store = store
        self._observer = observer
        self.published: list[Event] = []

    async def publish(self, event: Event) -> None:
        """Deliver one event the way the bus would, without a bus."""
        self.published.append(event)
        if isinstance(event, ChunkExtracted):
            publish = in_flow(self.publish, event.correlation_id)
            await merge_chunk(store=self._store, event=event, publish=publish)
        elif self._observer is not None:
            self._observer(event)


async def ingest_locally(
    *,
    store: ExtractorStore,
    source_ids: Iterable[str],
    limiter: Limiter | None,
    options: ExtractOptions,
    observer: Observer | None = None,
) -> dict[str, ExtractResult]:
    """Extract registered sources one after another with the pipeline's own functions."""
    bus = LocalBus(store, observer)
    tasks = SourceTasks()
    results: dict[str, ExtractResult] = {}
    for source_id in source_ids:
        try:
            results[source_id] = await run_source(
                store=store, source_id=source_id, publish=in_flow(bus.publish, source_id),
                limiter=limiter, options=options, tasks=tasks, last_attempt=True,
                correlation_id=source_id,  # one flow per source
            )  # fmt: skip
        except asyncio.CancelledError:
            # Ctrl-C: no extractor would ever resume this source, so it ends as cancelled.
            with contextlib.suppress(Exception):
                await asyncio.shield(mark_cancelled(store, source_id, bus.publish))
            raise
    return results


async def follow_sources(
    nc: Any, *, source_ids: set[str], observer: Observer, namespace: str = ""
) -> list[Any]:
    """Subscribe (core NATS) to the progress and outcome of these sources; returns the subs."""

    async def on_message(msg: Any) -> None:
        try:
            event = parse_event(msg.subject, msg.data, namespace=namespace)
        except BadInputError:
            return
        if getattr(event, "source_id", None) in source_ids:
            observer(event)

    subs = [
        await nc.subscribe(ns_subject(model.SUBJECT, namespace), cb=on_message)
        for model in FOLLOWED
    ]
    await subscriptions_settled(nc)
    return subs
