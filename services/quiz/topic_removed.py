"""A topic the KG owner removed takes its quiz bank along (kb.updated names removed ids)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from services.quiz.ports import QuizStore

log = logging.getLogger(__name__)


async def drop_removed_banks(store: QuizStore, removed_ids: Iterable[str]) -> int:
    """Delete the banks of removed topics; how many existed (a redelivery finds none)."""
    dropped = 0
    for topic_id in sorted(set(removed_ids)):
        if await store.quiz_banks.delete(topic_id):
            dropped += 1
    if dropped:
        log.info("dropped the quiz bank(s) of %d removed topic(s)", dropped)
    return dropped
