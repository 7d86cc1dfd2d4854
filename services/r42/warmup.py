"""Warm the search path at start, off the event loop, so the first answer does not pay it.

A search's first run pays once for what later ones reuse: the analyzer's stemmer and pattern
set-up and the first sparse and numpy calls (~0.2 s cold) and, for a KB of NUMBA_MIN_TOPICS
topics or more, numba's import and its compiled kernels (~0.3 s from numba's cache, seconds
where the machine has no cache yet). One search of the snapshot the service starts with, in
a worker thread while the service waits for its first events, takes that cost earlier. An
empty KB (a fresh data dir) is warmed with a two-topic index instead: the sample handbook
that arrives next is small and takes the same numpy path.
"""

from __future__ import annotations

import logging
import time

from shared.kb.retrieval import RetrievalIndex
from shared.store import Topic

log = logging.getLogger(__name__)

_SAMPLE = (
    Topic(id="warmup-a", label="Ouderschapsverlof", type="concept",
          description="Verlof na de geboorte of adoptie van een kind."),
    Topic(id="warmup-b", label="Pensioenregeling", type="process",
          description="Hoe de werkgever bijdraagt aan het pensioen."),
)  # fmt: skip


def warm_retrieval(index: RetrievalIndex | None = None, label: str = "") -> float:
    """Search `index` once for `label` (or a two-topic index when it is empty); seconds taken."""
    started = time.perf_counter()
    if index is None or len(index) == 0 or not label:
        index, label = RetrievalIndex.build(_SAMPLE), "Hoeveel dagen ouderschapsverlof krijg ik?"
    index.search(label)
    took = time.perf_counter() - started
    log.info("search path warmed on %d topic(s) in %.0f ms", len(index), took * 1000)
    return took
