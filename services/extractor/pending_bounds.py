"""Bounds on relations that wait for a topic, and the report of those no file can complete.

A handbook file's relation to a topic no synced file defines would wait forever, unseen.
The rule: a file keeps at most MAX_PER_FILE pending relations (the rest are dropped when
the file is merged, and logged); after a complete sync (every file of the tree synced, none
failed, held or left untried) whatever still waits is waiting for a topic no file of the
tree defines: the sync reports each such relation once (as typed data, `Unresolved.summary`,
that each surface words), and drops those that have waited longer than MAX_WAIT (counted
from the first version of the file that asserted them).
`r42 kb pending` lists everything that waits, with its source and age.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from services.extractor.pending import (
    HANDBOOK_PREFIX,
    describe,
    file_of,
    missing_ends,
    resolve_pending,
)
from services.extractor.ports import ExtractorStore
from shared.bus.extractor_rpc import SHOWN_WAITING, SyncWaiting, WaitingRelation
from shared.store import PendingRelation, utcnow

log = logging.getLogger(__name__)

MAX_WAIT = timedelta(days=30)
"""A relation waiting this long for its topic after a complete sync is dropped."""
SCAN_LIMIT = 50_000
REPORTED_SCOPE = "extractor.pending.reported"


@dataclass(frozen=True)
class Unresolved:
    """After a complete sync: relations waiting for topics no file of the tree defines."""

    newly_waiting: list[PendingRelation] = field(default_factory=list)
    """Found waiting for the first time (each relation is reported once)."""
    expired: list[PendingRelation] = field(default_factory=list)
    """Dropped now: they waited longer than MAX_WAIT."""
    still_waiting: int = 0
    """Every handbook relation that still waits (reported before or now)."""

    def summary(self) -> SyncWaiting:
        """The typed report a sync's reply carries; each surface words it in its language."""
        return SyncWaiting(
            newly_waiting=len(self.newly_waiting), expired=len(self.expired),
            still_waiting=self.still_waiting, max_wait_days=MAX_WAIT.days,
            newly_shown=_shown(self.newly_waiting), expired_shown=_shown(self.expired),
        )  # fmt: skip


def _shown(rows: list[PendingRelation]) -> list[WaitingRelation]:
    shown = []
    for p in rows[:SHOWN_WAITING]:
        r = p.relation
        shown.append(WaitingRelation(source=r.source, target=r.target, type=r.type,
                                     file=file_of(p.source_id)))  # fmt: skip
    return shown


def _reported_key(p: PendingRelation) -> str:
    return hashlib.sha256("\0".join(map(str, p.identity)).encode()).hexdigest()[:40]


async def review_waiting(store: ExtractorStore, *, now: datetime | None = None) -> Unresolved:
    """After a complete sync: drop what waited past MAX_WAIT, report the rest once."""
    moment = now or utcnow()
    rows = [p for p in await store.pending_merges.all_relations(limit=SCAN_LIMIT)
            if p.source_id.startswith(HANDBOOK_PREFIX)]  # fmt: skip
    if not rows:
        return Unresolved()
    ends = {end for p in rows for end in (p.relation.source, p.relation.target)}
    present = {t.id for t in await store.topics.get_many(ends)}
    if any(not missing_ends(p, present) for p in rows):
        # Both ends exist (a topic came in a way that did not resolve it): apply it now.
        await resolve_pending(store, present)
        rows = [p for p in rows if missing_ends(p, present)]
    expired = [p for p in rows if p.added_at is not None and moment - p.added_at > MAX_WAIT]
    if expired:
        await store.pending_merges.remove_relations(expired)
        log.info("dropped %d pending relation(s) after %d days: %s", len(expired),
                 MAX_WAIT.days, describe(expired, present))  # fmt: skip
    gone = {p.identity for p in expired}
    waiting = [p for p in rows if p.identity not in gone]
    newly = []
    for p in waiting:
        key = _reported_key(p)
        if await store.idempotency.get(REPORTED_SCOPE, key) is not None:
            continue  # reported by an earlier sync (a read: a no-op sync writes nothing)
        if await store.idempotency.put_if_absent(
            REPORTED_SCOPE, key, {"source_id": p.source_id}, ttl_s=_ttl_s()
        ):
            newly.append(p)
    if newly:
        log.warning("%d relation(s) wait for topics no handbook file defines: %s", len(newly),
                    describe(newly, present))  # fmt: skip
    return Unresolved(newly_waiting=newly, expired=expired, still_waiting=len(waiting))


def _ttl_s() -> float:
    # Remembered as long as the relation may wait, so it is reported once in its life.
    return (MAX_WAIT + timedelta(days=1)).total_seconds()
