"""The r42 service's KB snapshot, and how its work in steps runs beside the turns."""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from shared.kb import RelationIndex, RetrievalIndex
from shared.kb.scoring import NUMBA_MIN_TOPICS
from shared.kb.steps import Steps
from shared.store import Topic

FREEZE_MIN_TOPICS = 2000  # from this size a snapshot is kept out of the GC's walks
SLICE_S = 0.002  # the longest stretch of update work on the event loop between two turns
FREEZE_EVERY_S = 0.05  # a full rebuild keeps what it built out of the GC this often
# Below this an update's numpy passes run on the loop (each sub-ms), and no compiled search
# kernels need loading (shared.kb.scoring uses them from this size on).
OFFLOAD_MIN_TOPICS = NUMBA_MIN_TOPICS


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


def label_key(topic: Topic) -> str:
    return topic.label.strip().casefold()


def labels_of(topics: Iterable[Topic]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for topic in topics:
        labels.setdefault(label_key(topic), topic.id)
    return labels


async def sliced[T](steps: Steps[T], *, slice_s: float = SLICE_S, offload: bool = True) -> T:
    """Run a step function on the event loop, letting other tasks in every `slice_s`.

    Its Python slices run here, between turns: in a worker thread they would hold the
    GIL against the loop for up to the switch interval each time the loop lets go of it.
    Its numpy passes run in a worker thread (they release the GIL), or here when not
    `offload`: on a small KB each is a fraction of a millisecond, and the hand-off to a
    thread and back cost more than that, several times per update, on a busy machine.
    """
    value: Any = None
    mark = time.perf_counter()
    while True:
        try:
            step = steps.send(value)
        except StopIteration as done:
            result: T = done.value
            return result
        if step is None:
            value = None
            if time.perf_counter() - mark >= slice_s:
                await asyncio.sleep(0)
                mark = time.perf_counter()
        elif offload:
            value = await asyncio.to_thread(step)
            mark = time.perf_counter()
        else:
            value = step()


def freezing[T](steps: Steps[T], *, active: bool, every_s: float = FREEZE_EVERY_S) -> Steps[T]:
    """These steps, with what they built so far kept out of the collector every `every_s`.

    Each time only the objects made since the last time are collected first (the young
    generations), a short pass, where one collection after the whole work was not.
    """
    if not active:
        return (yield from steps)
    value: Any = None
    mark = time.perf_counter()
    while True:
        try:
            step = steps.send(value)
        except StopIteration as done:
            result: T = done.value
            return result
        if time.perf_counter() - mark >= every_s:
            freeze_long_lived()
            mark = time.perf_counter()
        value = yield step


def freeze_long_lived() -> None:
    """Keep what lives now (the new snapshot) out of the cyclic collector's walks.

    A large snapshot is millions of long-lived objects, and every full collection walks
    them all while holding the GIL: at 50k topics that stalled the event loop for hundreds
    of milliseconds during an ingest. Snapshots hold no reference cycles (refcounting
    frees a replaced one), so freezing them leaks nothing but the little cyclic garbage
    that happens to be alive at this moment (the young generations are collected first).

    Done after every update too: left to itself the collector walked each update's new
    objects again and again in passes of 50-180 ms at random moments of a large ingest
    (measured at 50k topics with 400-topic updates; 57 ms at most with this).
    """
    gc.collect(1)
    gc.freeze()
