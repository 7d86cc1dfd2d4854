"""A cached snapshot of the knowledge graph (topics, relations, retrieval index) per replica.

Freshness: the KG has one writer (the extractor), which publishes `kb.updated` after every
change. Every R42 replica must drop its snapshot on every such event, so the service
listens with a plain core-NATS subscription (no queue group, no durable consumer: a
durable shared by replicas would hand each event to only one of them) and calls
`KbCache.invalidate()`. Events missed while disconnected are covered by `max_age_s`: a
snapshot older than that is rebuilt anyway. The retrieval index is kept in an
`IndexCache` keyed by the KB hash; `invalidate()` clears it too, because a kb.updated
may change descriptions without changing the topic ids the hash is computed from.

Rebuilds run in the background; a turn waits for one (at most `fresh_wait_s` when an
older snapshot exists, so a big rebuild never stalls chat) and otherwise answers from the
previous snapshot.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from services.r42.lookup import content_text
from services.r42.ports import R42Store
from shared.kb import (
    IndexCache,
    KbContext,
    RelationIndex,
    RetrievalIndex,
    build_kb_catalogue,
    build_kb_context,
)
from shared.store import Topic

log = logging.getLogger(__name__)

SUMMARY_CHARS = 1000
CONTEXT_CONTENT_CHARS = 2000
CONTEXT_MAX_TOPICS = 10


@dataclass(frozen=True)
class KbSnapshot:
    """One consistent view of the KB for answering: index, topics, relations, labels."""

    index: RetrievalIndex
    topics: Mapping[str, Topic]
    relations: RelationIndex
    labels: Mapping[str, str] = field(default_factory=dict)
    built_at: float = 0.0
    catalogue: str = ""  # every topic, one line each: the same text for one KB version

    @property
    def kb_hash(self) -> str:
        """The KB hash of the indexed topic ids."""
        return self.index.fingerprint


async def _summaries(store: R42Store, topic_ids: list[str]) -> dict[str, str]:
    wanted = set(topic_ids)
    out: dict[str, str] = {}
    for content in await store.content.list():
        if content.topic_id in wanted:
            text = content_text(content, limit=SUMMARY_CHARS)
            if text:
                out[content.topic_id] = text
    return out


async def load_snapshot(store: R42Store, *, index_cache: IndexCache | None = None) -> KbSnapshot:
    """Read topics, relations and content summaries from the store and index them."""
    topics = await store.topics.list()
    relations = await store.relations.list()
    summaries = await _summaries(store, [topic.id for topic in topics])
    cache = index_cache or IndexCache()
    # TF-IDF fitting is CPU-bound: off the event loop, so rpc and pings keep flowing.
    index = await asyncio.to_thread(cache.get_or_build, topics, summaries=summaries)
    labels: dict[str, str] = {}
    for topic in topics:
        labels.setdefault(topic.label.strip().casefold(), topic.id)
    return KbSnapshot(
        index=index,
        topics={topic.id: topic for topic in topics},
        relations=RelationIndex(relations),
        labels=labels,
        catalogue=build_kb_catalogue(topics),
        built_at=time.monotonic(),
    )


class KbCache:
    """The replica's current snapshot, rebuilt after `invalidate()` or when too old."""

    def __init__(
        self, store: R42Store, *, max_age_s: float = 300.0, fresh_wait_s: float = 3.0
    ) -> None:
        self._store = store
        self._max_age_s = max_age_s
        self._fresh_wait_s = fresh_wait_s
        self._index_cache = IndexCache()
        self._snapshot: KbSnapshot | None = None
        self._generation = 0
        self._built_generation = -1
        self._task: asyncio.Task[KbSnapshot] | None = None

    @property
    def current(self) -> KbSnapshot | None:
        """The latest snapshot built (possibly stale), without waiting."""
        return self._snapshot

    def warm(self) -> None:
        """Start building a snapshot in the background (service start: no cold first turn)."""
        self._rebuild_task()

    def invalidate(self) -> None:
        """Mark the snapshot stale (a kb.updated arrived); the next get() rebuilds."""
        self._generation += 1
        self._index_cache.invalidate()

    def _fresh(self, snapshot: KbSnapshot) -> bool:
        return (
            self._built_generation == self._generation
            and time.monotonic() - snapshot.built_at < self._max_age_s
        )

    async def get(self) -> KbSnapshot:
        """A fresh snapshot; the previous one if a rebuild takes longer than fresh_wait_s."""
        snapshot = self._snapshot
        if snapshot is not None and self._fresh(snapshot):
            return snapshot
        task = self._rebuild_task()
        if snapshot is None:
            return await asyncio.shield(task)
        try:
            return await asyncio.wait_for(asyncio.shield(task), self._fresh_wait_s)
        except TimeoutError:
            log.info("kb snapshot rebuild still running; answering from the previous one")
            return snapshot
        except Exception:
            log.warning("kb snapshot rebuild failed; using the previous one", exc_info=True)
            return snapshot

    def _rebuild_task(self) -> asyncio.Task[KbSnapshot]:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._rebuild(), name="r42-kb-snapshot")
            self._task.add_done_callback(_consume_exception)
        return self._task

    async def _rebuild(self) -> KbSnapshot:
        generation = self._generation
        started = time.perf_counter()
        snapshot = await load_snapshot(self._store, index_cache=self._index_cache)
        self._snapshot = snapshot
        # An invalidate() during the build leaves the generation ahead: rebuilt on next get().
        self._built_generation = generation
        log.info(
            "kb snapshot built: %d topics, kb_hash %s, %.0f ms",
            len(snapshot.topics), snapshot.kb_hash, (time.perf_counter() - started) * 1000,
        )  # fmt: skip
        return snapshot

    async def aclose(self) -> None:
        """Cancel a rebuild in flight."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task


def _consume_exception(task: asyncio.Task[KbSnapshot]) -> None:
    # Waiters see the exception; this keeps asyncio from logging "never retrieved".
    if not task.cancelled():
        task.exception()


async def turn_context(*, store: R42Store, snapshot: KbSnapshot, question: str) -> KbContext:
    """The KB context block for a question: one search, the top topics' content read at once."""
    hits = snapshot.index.search(question, k=CONTEXT_MAX_TOPICS) if question.strip() else []
    ids = [hit.topic_id for hit in hits]
    found = await asyncio.gather(*(store.content.get(topic_id) for topic_id in ids))
    contents: dict[str, str] = {}
    for topic_id, content in zip(ids, found, strict=True):
        text = content_text(content, limit=CONTEXT_CONTENT_CHARS)
        if text:
            contents[topic_id] = text
    return build_kb_context(
        question,
        index=snapshot.index,
        topics=snapshot.topics,
        relations=snapshot.relations,
        contents=contents,
        max_topics=CONTEXT_MAX_TOPICS,
        hits=hits,
    )
