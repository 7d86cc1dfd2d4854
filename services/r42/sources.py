"""The sources of an answer: the topics it used, as the person sees them under it.

Every topic looked up successfully (in lookup order), then the context and search_kb topics
(in retrieval order) whose label or id the answer mentions as a whole word (accent-folded);
at most MAX_SOURCES. The folded label's pattern is compiled once per label and kept (labels
repeat across turns; bench/bench_answer_sources.py measures the saving).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping

from services.r42.lookup import LookupResult
from shared.bus import SourceRef
from shared.kb import fold_text
from shared.store import Topic

MAX_SOURCES = 5
PATTERN_CACHE = 8192


@functools.lru_cache(maxsize=PATTERN_CACHE)
def mention_pattern(phrase: str) -> re.Pattern[str] | None:
    """The whole-word pattern of a folded label or id (None when too short to count)."""
    folded = fold_text(phrase).strip()
    if len(folded) < 3:
        return None
    return re.compile(rf"(?<!\w){re.escape(folded)}(?!\w)")


def _mentions(folded_answer: str, phrase: str) -> bool:
    pattern = mention_pattern(phrase)
    return pattern is not None and pattern.search(folded_answer) is not None


def answer_sources(
    answer: str,
    *,
    lookups: Iterable[LookupResult],
    context_ids: Iterable[str],
    topics: Mapping[str, Topic],
    limit: int = MAX_SOURCES,
) -> list[SourceRef]:
    """Looked-up topics, then context topics the answer mentions by label or id (≤ limit)."""
    chosen: dict[str, str] = {}
    for result in lookups:
        if result.topic is not None:
            chosen.setdefault(result.topic.id, result.topic.label)
    folded = fold_text(answer)
    for topic_id in context_ids:
        topic = topics.get(topic_id)
        if topic is None or topic_id in chosen:
            continue
        if _mentions(folded, topic.label) or _mentions(folded, topic.id):
            chosen[topic_id] = topic.label
    return [SourceRef(id=i, label=label) for i, label in list(chosen.items())[:limit]]
