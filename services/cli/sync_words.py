"""English words for the handbook sync's typed report (chat surfaces word it in Dutch)."""

from __future__ import annotations

from shared.bus.extractor_rpc import SyncWaiting, named


def waiting_words(waiting: SyncWaiting | None) -> str:
    """The sync's one line about relations no file can complete (empty when none are new)."""
    if waiting is None:
        return ""
    parts = []
    if n := waiting.newly_waiting:
        listed = named(waiting.newly_shown, n)
        parts.append(f"{n} relation(s) wait for topics no file defines: {listed}")
    if n := waiting.expired:
        listed, days = named(waiting.expired_shown, n), waiting.max_wait_days
        parts.append(f"{n} relation(s) dropped after waiting {days} days: {listed}")
    return "; ".join(parts)
