"""A cached snapshot of the knowledge graph (topics, relations, retrieval index) per replica.

Freshness: the KG has one writer (the extractor), which publishes `kb.updated` (changed and
removed ids) after every change. Every R42 replica hears every such event on a plain
core-NATS subscription (no queue group, no durable consumer: a durable shared by replicas
would hand each event to only one of them) and calls `KbCache.update(event)`, which
applies the change incrementally: it reads only the named topics, their relations and
content, and derives the next snapshot from the current one (`RetrievalIndex.updated`)
in a worker thread, so the event loop keeps serving turns. The store is the truth for
each id: present means changed, absent means removed, whatever order events arrive in.
A change touching more than a quarter of the KB, an event that lists no ids or whose list
may have been cut short, a failed update, or events missed while disconnected
(`max_age_s`) lead to a full rebuild in the background.

A turn never waits for an update in flight, nor for a rebuild an update asked for: it
answers from the snapshot before it (only an empty snapshot, which answers nothing, waits
for its first update). It waits for a rebuild only when there is no snapshot yet or it
was invalidated (an event naming no ids; at most `fresh_wait_s`, then it answers from the
previous snapshot); an old snapshot is rebuilt in the background while turns keep using it.

An update runs in steps (`sliced`): its Python work in slices of at most `SLICE_S` on the
event loop, between turns, and its passes over the whole KB as numpy in a worker thread.
Pure-Python work in a thread would hold the GIL against the loop for up to the switch
interval each time the loop lets go of it (measured: stalls of 80-220 ms at 50k topics).
A full rebuild runs the same way (`load_snapshot`): the store read in keyset pages, the
index built in steps (`RetrievalIndex.building`), what it builds kept out of the cyclic
collector as it grows, and the snapshot it replaces freed in slices (`_retired`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping
from typing import Any

from services.r42.lookup import content_text
from services.r42.ports import R42Store
from services.r42.rebuild import SUMMARY_CHARS, load_snapshot, retired
from services.r42.snapshot import (
    FREEZE_MIN_TOPICS,
    OFFLOAD_MIN_TOPICS,
    KbSnapshot,
    freeze_long_lived,
    label_key,
    labels_of,
    sliced,
)
from shared.bus import KbUpdated
from shared.kb import (
    IndexCache,
    KbContext,
    build_kb_catalogue,
    build_kb_context,
)
from shared.kb.overlay import Layered
from shared.kb.steps import Steps, run_steps
from shared.store import Relation, Topic

__all__ = [
    "CONTEXT_MAX_TOPICS", "KbCache", "KbSnapshot", "load_snapshot", "sliced", "turn_context",
    "updated_snapshot", "updating_snapshot",
]  # fmt: skip

log = logging.getLogger(__name__)

CONTEXT_CONTENT_CHARS = 2000
CONTEXT_MAX_TOPICS = 10
MAX_INCREMENTAL_SHARE = 0.25  # above this share of the KB (and MIN_INCREMENTAL ids) an
MIN_INCREMENTAL = 64  # update is a full rebuild
LISTED_IDS = 500  # the extractor's cap on the ids one kb.updated lists


def _layered[V](mapping: Mapping[str, V]) -> Layered[str, V]:
    return mapping if isinstance(mapping, Layered) else Layered(mapping)


def updated_snapshot(
    snapshot: KbSnapshot,
    *,
    changed: list[Topic],
    removed: set[str],
    relations: list[Relation],
    summaries: Mapping[str, str],
) -> KbSnapshot:
    """The snapshot after these topics changed and those were removed."""
    return run_steps(
        updating_snapshot(
            snapshot, changed=changed, removed=removed, relations=relations, summaries=summaries
        )
    )


def updating_snapshot(
    snapshot: KbSnapshot,
    *,
    changed: list[Topic],
    removed: set[str],
    relations: list[Relation],
    summaries: Mapping[str, str],
) -> Steps[KbSnapshot]:
    """updated_snapshot in steps (shared.kb.steps; `sliced` runs them beside the turns).

    The Python steps cost the changed topics (plus a copy in C of a dict or list of the
    KB now and then); the passes over the whole KB are numpy, for a worker thread.
    """
    affected = removed | {topic.id for topic in changed}
    index = yield from snapshot.index.updating(
        changed=changed, removed=removed, summaries=summaries
    )
    before = snapshot.topics
    topics = yield from _layered(before).deriving(
        put=((topic.id, topic) for topic in changed), drop=removed
    )
    labels = _layered(snapshot.labels)
    lost: set[str] = set()
    for topic_id in affected:
        old = before.get(topic_id)
        if old is not None and labels.get(key := label_key(old)) == topic_id:
            lost.add(key)
    fresh = {
        label: i for label, i in labels_of(changed).items() if label in lost or label not in labels
    }
    labels = yield from labels.deriving(drop=lost - fresh.keys(), put=fresh.items())
    if lost - fresh.keys():
        # A removed or renamed label another topic shares: that topic takes it over.
        taken: dict[str, str] = {}
        for at, topic in enumerate(topics.values()):
            if (key := label_key(topic)) in lost and key not in fresh:
                taken.setdefault(key, topic.id)
            if at % 256 == 255:
                yield None
        labels = yield from labels.deriving(put=taken.items())
    yield None
    relation_index = yield from snapshot.relations.replacing(affected, relations)
    yield None
    return KbSnapshot(
        index=index,
        topics=topics,
        relations=relation_index,
        labels=labels,
        catalogue=build_kb_catalogue(topics, order=index.sorted_ids),
        built_at=snapshot.built_at,  # the age of the last full read of the store
    )


class KbCache:
    """The replica's current snapshot: updated per kb.updated, rebuilt when invalid or old."""

    def __init__(
        self, store: R42Store, *, max_age_s: float = 300.0, fresh_wait_s: float = 3.0
    ) -> None:
        self._store = store
        self._max_age_s = max_age_s
        self._fresh_wait_s = fresh_wait_s
        # One entry: the index of the last full read, so a replaced one is the old
        # snapshot's alone (and released in slices with it, see _retired).
        self._index_cache = IndexCache(max_entries=1)
        self._retiring: set[asyncio.Task[None]] = set()
        self._snapshot: KbSnapshot | None = None
        self._generation = 0
        self._built_generation = -1
        self._task: asyncio.Task[KbSnapshot] | None = None
        self._pending: set[str] = set()
        self._truncated = False
        self._updater: asyncio.Task[None] | None = None

    @property
    def current(self) -> KbSnapshot | None:
        """The latest snapshot built (possibly stale), without waiting."""
        return self._snapshot

    def warm(self) -> None:
        """Start building a snapshot in the background (service start: no cold first turn)."""
        self._rebuild_task()

    def invalidate(self) -> None:
        """Mark the snapshot stale; the next get() rebuilds it from the whole store."""
        self._generation += 1
        self._index_cache.invalidate()

    def update(self, event: KbUpdated) -> None:
        """Apply a kb.updated in the background: only the ids it names are read again."""
        if not event.changed_ids and not event.removed_ids:
            # An event that does not say what changed: read the whole store again.
            self.invalidate()
            self._rebuild_task()
            return
        self._pending.update(event.changed_ids, event.removed_ids)
        # The writer lists at most LISTED_IDS ids of each kind; a full list may be cut short.
        self._truncated |= max(len(event.changed_ids), len(event.removed_ids)) >= LISTED_IDS
        if self._updater is None or self._updater.done():
            self._updater = asyncio.create_task(self._apply_pending(), name="r42-kb-update")
            self._updater.add_done_callback(_consume_exception)

    async def settled(self) -> None:
        """Wait until every update heard so far is applied, rebuilds too (tests, benchmarks)."""
        while True:
            busy = [t for t in (self._updater, self._task) if t is not None and not t.done()]
            if not busy:
                return
            with contextlib.suppress(Exception):
                await asyncio.shield(busy[0])

    async def _apply_pending(self) -> None:
        while self._pending:
            if self._task is not None and not self._task.done():
                # A rebuild reads the whole store: apply what it may have missed after it.
                with contextlib.suppress(Exception):
                    await asyncio.shield(self._task)
            snapshot = self._snapshot
            ids, self._pending = self._pending, set()
            truncated, self._truncated = self._truncated, False
            size = len(snapshot.topics) if snapshot is not None else 0
            too_many = len(ids) > max(MAX_INCREMENTAL_SHARE * size, MIN_INCREMENTAL)
            if snapshot is None or truncated or too_many:
                self._refresh()
                continue
            started = time.perf_counter()
            try:
                self._snapshot = await self._applied(snapshot, ids)
            except Exception:
                log.warning("kb update failed; rebuilding the snapshot", exc_info=True)
                self._refresh()
                continue
            # The cached index of the last full read no longer matches the store's text.
            self._index_cache.invalidate()
            applied = time.perf_counter()
            if len(self._snapshot.topics) >= FREEZE_MIN_TOPICS:
                freeze_long_lived()
            log.info(
                "kb snapshot updated: %d ids, %d topics, %.0f ms (collector %.0f ms)",
                len(ids), len(self._snapshot.topics), (applied - started) * 1000,
                (time.perf_counter() - applied) * 1000,
            )  # fmt: skip

    async def _applied(self, snapshot: KbSnapshot, ids: set[str]) -> KbSnapshot:
        store = self._store
        changed = await store.topics.get_many(sorted(ids))
        relations = await store.relations.touching(ids)
        found = await store.content.get_many([topic.id for topic in changed]) if changed else []
        summaries = {}
        for content in found:
            text = content_text(content, limit=SUMMARY_CHARS)
            if text:
                summaries[content.topic_id] = text
        removed = ids - {topic.id for topic in changed}
        # Frozen out of the GC once done (_apply_pending), not as it goes: a collection of
        # the young every 20 ms of a 400-topic update measured worse (chat p95 75-90 ms
        # against 32 ms during a compaction at load 5-6).
        return await sliced(
            updating_snapshot(
                snapshot, changed=changed, removed=removed, relations=relations,
                summaries=summaries,
            ),
            offload=len(snapshot.topics) + len(ids) >= OFFLOAD_MIN_TOPICS,
        )  # fmt: skip

    async def get(self) -> KbSnapshot:
        """The snapshot to answer from; waits (≤ fresh_wait_s) for updates and invalidations."""
        updater = self._updater
        if updater is not None and not updater.done() and self._snapshot is not None:
            # An update in flight: answer from the snapshot before it (a turn never waits
            # for an ingest). Only an empty snapshot answers nothing: then wait for it.
            if not self._snapshot.topics:
                await asyncio.shield(updater)
        snapshot = self._snapshot
        if snapshot is not None and self._built_generation == self._generation:
            if time.monotonic() - snapshot.built_at >= self._max_age_s:
                self._rebuild_task()  # old but valid: refresh in the background
            return snapshot
        task = self._rebuild_task()
        if snapshot is None or not snapshot.topics:
            return await asyncio.shield(task)
        try:
            return await asyncio.wait_for(asyncio.shield(task), self._fresh_wait_s)
        except TimeoutError:
            log.info("kb snapshot rebuild still running; answering from the previous one")
            return snapshot
        except Exception:
            log.warning("kb snapshot rebuild failed; using the previous one", exc_info=True)
            return snapshot

    def _refresh(self) -> None:
        # A full read for changes an update cannot apply. Turns go on answering from the
        # current snapshot meanwhile (as during an update): it is behind, not wrong.
        self._index_cache.invalidate()
        self._rebuild_task()

    def _rebuild_task(self) -> asyncio.Task[KbSnapshot]:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._rebuild(), name="r42-kb-snapshot")
            self._task.add_done_callback(_consume_exception)
        return self._task

    async def _rebuild(self) -> KbSnapshot:
        generation = self._generation
        started = time.perf_counter()
        snapshot = await load_snapshot(self._store, index_cache=self._index_cache)
        old, self._snapshot = self._snapshot, snapshot
        if old is not None:
            self._retire(old)
            del old
        if len(snapshot.topics) >= FREEZE_MIN_TOPICS:
            freeze_long_lived()
        # An invalidate() during the build leaves the generation ahead: rebuilt on next get().
        self._built_generation = generation
        log.info(
            "kb snapshot built: %d topics, kb_hash %s, %.0f ms",
            len(snapshot.topics), snapshot.kb_hash, (time.perf_counter() - started) * 1000,
        )  # fmt: skip
        return snapshot

    def _retire(self, old: KbSnapshot) -> None:
        # A rebuilt snapshot shares nothing with the one it replaces: dropping that at once
        # frees millions of objects in one call (190 ms at 50k topics), so it goes in slices.
        if len(old.topics) < FREEZE_MIN_TOPICS:
            return
        task = asyncio.create_task(retired(old), name="r42-kb-retire")
        self._retiring.add(task)
        task.add_done_callback(self._retiring.discard)

    async def aclose(self) -> None:
        """Cancel a rebuild or an update in flight."""
        for task in (self._task, self._updater, *self._retiring):
            if task is not None and not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task


def _consume_exception(task: asyncio.Task[Any]) -> None:
    # Waiters see the exception; this keeps asyncio from logging "never retrieved".
    if not task.cancelled():
        task.exception()


async def turn_context(*, store: R42Store, snapshot: KbSnapshot, question: str) -> KbContext:
    """The KB context block for a question: one search, the top topics' content read at once."""
    hits = snapshot.index.search(question, k=CONTEXT_MAX_TOPICS) if question.strip() else []
    ids = [hit.topic_id for hit in hits]
    # One query for every hit's content (a read per topic cost ten round trips a turn).
    found = await store.content.get_many(ids) if ids else []
    contents: dict[str, str] = {}
    for content in found:
        text = content_text(content, limit=CONTEXT_CONTENT_CHARS)
        if text:
            contents[content.topic_id] = text
    return build_kb_context(
        question,
        index=snapshot.index,
        topics=snapshot.topics,
        relations=snapshot.relations,
        contents=contents,
        max_topics=CONTEXT_MAX_TOPICS,
        hits=hits,
    )
