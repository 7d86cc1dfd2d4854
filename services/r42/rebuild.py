"""The full rebuild of the r42 service's KB snapshot, beside the turns.

It runs when an update cannot be applied, and every few minutes: the store read in short
keyset pages (a turn's own reads queue behind one page at most), the index built in
steps (`RetrievalIndex.building`: Python slices on the loop, numpy passes in a thread),
what it builds kept out of the cyclic collector as it grows, and the snapshot it
replaces freed in slices once no turn holds it (at 50k topics dropping it at once took
190 ms, and a full collection over a half-built snapshot several hundred).
"""

from __future__ import annotations

import asyncio
import sys
import time

from services.r42.lookup import content_text
from services.r42.ports import R42Store
from services.r42.snapshot import (
    FREEZE_MIN_TOPICS,
    OFFLOAD_MIN_TOPICS,
    KbSnapshot,
    freeze_long_lived,
    freezing,
    label_key,
    sliced,
)
from shared.kb import IndexCache, RelationIndex, RetrievalIndex, build_kb_catalogue
from shared.kb.overlay import Layered
from shared.kb.steps import Steps, releasing
from shared.store import Relation, Topic

SUMMARY_CHARS = 1000
PAGE_TOPICS = 128  # topics per store read (parsed on the loop: about 2 ms)
PAGE_RELATIONS = 256
SLICE_TOPICS = 256
RETIRE_POLL_S = 0.25  # a replaced snapshot is freed in slices once no turn holds it
RETIRE_WAIT_S = 60.0
RELEASE_MIN = 4096  # containers of this many entries or more are emptied in chunks
RELEASE_DEPTH = 5


async def load_snapshot(store: R42Store, *, index_cache: IndexCache | None = None) -> KbSnapshot:
    """Read topics, relations and content summaries from the store and index them.

    In steps beside the turns: the store is read in short keyset pages (a turn's own
    reads queue behind one page at most, not behind the whole graph), each page parsed on
    the loop, and the build runs `sliced`. What it builds is kept out of the collector's
    walks as it grows (`_freezing`): a full collection over a half-built 50k-topic
    snapshot held the GIL for hundreds of milliseconds.
    """
    cache = index_cache or IndexCache()
    topics, summaries = await _read_topics(store)
    relations = await _read_relations(store, large=len(topics) >= FREEZE_MIN_TOPICS)
    large = len(topics) >= FREEZE_MIN_TOPICS
    offload = len(topics) >= OFFLOAD_MIN_TOPICS
    index = await sliced(
        freezing(cache.getting_or_building(topics, summaries=summaries), active=large),
        offload=offload,
    )
    if offload:
        # On a KB large enough for the compiled kernels (shared.kb.scoring), the first
        # search imports numba and loads them (compiled once per machine, then cached on
        # disk): here, in a worker thread, not in the first turn on the event loop.
        await asyncio.to_thread(index.search, "r42")
    return await sliced(freezing(_snapshot_steps(index, topics, relations), active=large))


async def _read_topics(store: R42Store) -> tuple[list[Topic], dict[str, str]]:
    topics: list[Topic] = []
    summaries: dict[str, str] = {}
    after: str | None = None
    while page := await store.topics.page(after_id=after, limit=PAGE_TOPICS):
        topics += page
        after = page[-1].id
        for content in await store.content.get_many([topic.id for topic in page]):
            text = content_text(content, limit=SUMMARY_CHARS)
            if text:
                summaries[content.topic_id] = text
        if len(topics) >= FREEZE_MIN_TOPICS:
            freeze_long_lived()
    return topics, summaries


async def _read_relations(store: R42Store, *, large: bool) -> list[Relation]:
    relations: list[Relation] = []
    after: Relation | None = None
    while page := await store.relations.page(after=after, limit=PAGE_RELATIONS):
        relations += page
        after = page[-1]
        if large:
            freeze_long_lived()
    return relations


def _snapshot_steps(
    index: RetrievalIndex, topics: list[Topic], relations: list[Relation]
) -> Steps[KbSnapshot]:
    by_id: dict[str, Topic] = {}
    labels: dict[str, str] = {}
    for start in range(0, len(topics), SLICE_TOPICS):
        for topic in topics[start : start + SLICE_TOPICS]:
            by_id[topic.id] = topic
            labels.setdefault(label_key(topic), topic.id)
        yield None
    relation_index = yield from RelationIndex.building(relations)
    mapped = Layered.of(by_id)
    return KbSnapshot(
        index=index,
        topics=mapped,
        relations=relation_index,
        labels=Layered.of(labels),
        catalogue=build_kb_catalogue(mapped, order=index.sorted_ids),  # within its budget
        built_at=time.monotonic(),
    )


async def retired(snapshot: KbSnapshot) -> None:
    """Free a replaced snapshot in slices once no turn holds it any more."""
    waited = 0.0
    # Held here only: this frame's variable and getrefcount's argument.
    while sys.getrefcount(snapshot) > 2:
        if waited >= RETIRE_WAIT_S:
            return  # a turn keeps it: it is freed with that turn, at once
        await asyncio.sleep(RETIRE_POLL_S)
        waited += RETIRE_POLL_S
    await sliced(_dismantling(snapshot))


def _dismantling(root: object) -> Steps[None]:
    """Empty, a chunk a slice, the large containers that only `root` reaches.

    Walks the attributes of the project's own objects below `root` (not the entries of
    containers) and empties each dict, list or set of RELEASE_MIN entries or more whose
    one reference is the attribute it was found in: nothing else can see it change.
    """
    level: list[object] = [root]
    for _ in range(RELEASE_DEPTH):
        below: list[object] = []
        for owner in level:
            for name in _fields(owner):
                child = getattr(owner, name, None)
                # The attribute, `child` and getrefcount's argument: no one else holds it.
                if child is None or sys.getrefcount(child) > 3:
                    continue
                if isinstance(child, (dict, list, set)):
                    if len(child) >= RELEASE_MIN:
                        yield from releasing(child)
                elif type(child).__module__.startswith(("shared.", "services.")):
                    below.append(child)
            yield None
        level = below


def _fields(owner: object) -> list[str]:
    names = list(getattr(owner, "__dict__", {}))
    for kind in type(owner).__mro__:
        slots = kind.__dict__.get("__slots__", ())
        names += [slots] if isinstance(slots, str) else list(slots)
    return names
