"""What the votes teach: approval per topic and ISO week, and the admins' gap list.

The gap list is what the handbook does not answer yet: questions whose retrieval found nothing
above the relevance floor (the turn's typed `kb_miss`, set by the r42 service and stored with
the turn) and questions whose answer got 👎, the same question (folded) counted once with how
often it came.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from shared.kb import fold_text
from shared.store import FeedbackVote, Store, iso_week, utcnow

GapReason = Literal["unanswered", "down"]
_WORD = re.compile(r"\w+")
SCAN_LIMIT = 2000
"""Turns and votes read per report at most (newest first)."""


@dataclass
class Gap:
    """One question the handbook does not answer yet (as asked; counted per folded form)."""

    question: str
    count: int
    last_at: datetime | None
    reasons: set[GapReason] = field(default_factory=set)
    comments: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class TopicRate:
    """Votes in one ISO week on answers that used one topic (None: answers without sources)."""

    week: str
    topic_id: str | None
    label: str
    up: int
    down: int

    @property
    def total(self) -> int:
        """Votes in this bucket."""
        return self.up + self.down


@dataclass(frozen=True)
class WeekTotal:
    """All votes of one ISO week (each vote once, however many topics its answer used)."""

    week: str
    up: int
    down: int

    @property
    def rate(self) -> float | None:
        """Share of 👍 (None without votes)."""
        total = self.up + self.down
        return self.up / total if total else None


@dataclass(frozen=True)
class FeedbackReport:
    """Rates per week and topic, week totals, and the gap list."""

    weeks: list[WeekTotal]
    topics: list[TopicRate]
    gaps: list[Gap]


def _week_of(vote: FeedbackVote) -> str:
    # The store buckets a vote in the week it was first cast (its rates do the same).
    return iso_week(vote.created_at) if vote.created_at else ""


async def gap_list(store: Store, *, since: datetime, limit: int = 20) -> list[Gap]:
    """Unanswered and 👎 questions since `since`, most frequent (then newest) first."""
    gaps: dict[str, Gap] = {}

    def add(question: str, at: datetime | None, reason: GapReason, comment: str | None) -> None:
        if not question.strip():
            return  # a vote whose turn had expired: nothing to learn from
        key = " ".join(_WORD.findall(fold_text(question)))
        gap = gaps.get(key)
        if gap is None:
            gap = gaps[key] = Gap(question=question.strip(), count=0, last_at=at)
        gap.count += 1
        gap.reasons.add(reason)
        if at is not None and (gap.last_at is None or at > gap.last_at):
            gap.last_at = at
        if comment and comment not in gap.comments and len(gap.comments) < 3:
            gap.comments.append(comment)

    for turn in await store.turns.recent(since=since, limit=SCAN_LIMIT):
        if turn.kb_miss:
            add(turn.question, turn.created_at, "unanswered", None)
    for vote in await store.feedback.list(since=since, value="down", limit=SCAN_LIMIT):
        add(vote.question, vote.updated_at or vote.created_at, "down", vote.reason)
    ranked = sorted(
        gaps.values(),
        key=lambda g: (-g.count, -(g.last_at.timestamp() if g.last_at else 0.0), g.question),
    )
    return ranked[: max(limit, 0)]


async def feedback_report(store: Store, *, weeks: int = 4, gaps: int = 20) -> FeedbackReport:
    """The last `weeks` ISO weeks (this one included) of votes, and the gap list over them."""
    now = utcnow()
    monday = (now - timedelta(days=now.weekday())).replace(hour=0, minute=0, second=0)
    since = monday.replace(microsecond=0) - timedelta(weeks=max(weeks, 1) - 1)
    labels = {t.id: t.label for t in await store.topics.list()}
    rates = await store.feedback.rates(since=since)
    topics = [
        TopicRate(
            week=r.week, topic_id=r.topic_id, up=r.up, down=r.down,
            label=labels.get(r.topic_id, r.topic_id) if r.topic_id else "(no sources)",
        )
        for r in rates
    ]  # fmt: skip
    totals: dict[str, list[int]] = {}
    for vote in await store.feedback.list(since=since, limit=SCAN_LIMIT * 5):
        counts = totals.setdefault(_week_of(vote), [0, 0])
        counts[0 if vote.value == "up" else 1] += 1
    week_totals = [WeekTotal(w, up, down) for w, (up, down) in sorted(totals.items()) if w]
    found = await gap_list(store, since=since, limit=gaps) if gaps > 0 else []
    return FeedbackReport(weeks=week_totals, topics=topics, gaps=found)


async def frequent_questions(
    store: Store, *, since: datetime, limit: int = 2, min_askers: int = 2
) -> list[str]:
    """Answered questions that several people asked since `since`, most askers first.

    Only a question at least `min_askers` different people asked is offered to others (one
    person's question stays theirs); a question R42 could not answer is never suggested.
    """
    askers: dict[str, set[str]] = {}
    shown: dict[str, str] = {}
    for turn in await store.turns.recent(since=since, limit=SCAN_LIMIT):
        question = " ".join(turn.question.split())
        if turn.kb_miss or not turn.topic_ids or not 3 <= len(question) <= 150:
            continue
        key = " ".join(_WORD.findall(fold_text(question)))
        askers.setdefault(key, set()).add(turn.user)
        shown.setdefault(key, question)  # newest wording first (recent() is newest first)
    ranked = sorted((k for k, who in askers.items() if len(who) >= min_askers),
                    key=lambda k: (-len(askers[k]), shown[k]))  # fmt: skip
    return [shown[k] for k in ranked[: max(limit, 0)]]
