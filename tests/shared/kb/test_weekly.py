"""Weekly topic selection: curriculum first, excluded topics never, a stable weighted hash."""

from __future__ import annotations

import random
from collections import Counter
from datetime import UTC, date, datetime

import pytest

from shared.errors import BadInputError
from shared.kb import KbTopic
from shared.kb.models import KbInputError
from shared.kb.weekly import RELEVANCE_WEIGHTS, iso_week, weekly_topic

TOPICS = [
    KbTopic("onboarding", "Onboarding", learning_relevance="core"),
    KbTopic("verlof", "Verlof", learning_relevance="standard"),
    KbTopic("parkeren", "Parkeren", learning_relevance="peripheral"),
    KbTopic("lunchmenu", "Lunchmenu", learning_relevance="exclude"),
]
WEEKS = [f"2026-W{n:02d}" for n in range(1, 53)]
USERS = [f"U{n:03d}" for n in range(60)]


@pytest.mark.parametrize(
    ("day", "expected"),
    [
        (date(2026, 1, 1), "2026-W01"),
        (date(2027, 1, 1), "2026-W53"),
        (date(2024, 12, 30), "2025-W01"),
        (datetime(2026, 3, 4, 23, 59, tzinfo=UTC), "2026-W10"),
    ],
)
def test_iso_week(day: date, expected: str) -> None:
    assert iso_week(day) == expected


def test_iso_week_rejects_non_dates() -> None:
    with pytest.raises(BadInputError, match="needs a date"):
        iso_week("2026-01-01")  # type: ignore[arg-type]


def test_excluded_topics_are_never_chosen() -> None:
    picks = {
        weekly_topic(user_id=u, week=w, topics=TOPICS, curriculum_topic=None)
        for u in USERS
        for w in WEEKS
    }
    assert "lunchmenu" not in picks
    assert picks == {"onboarding", "verlof", "parkeren"}


def test_curriculum_wins_unless_excluded_or_unknown() -> None:
    for user in USERS[:10]:
        assert (
            weekly_topic(user_id=user, week="2026-W07", topics=TOPICS, curriculum_topic="parkeren")
            == "parkeren"
        )
    hashed = weekly_topic(user_id="U1", week="2026-W07", topics=TOPICS, curriculum_topic=None)
    for skipped in ("lunchmenu", "deleted-topic"):
        assert (
            weekly_topic(user_id="U1", week="2026-W07", topics=TOPICS, curriculum_topic=skipped)
            == hashed
        )


def test_same_user_and_week_always_get_the_same_topic_whatever_the_order() -> None:
    shuffled = list(TOPICS)
    random.Random(7).shuffle(shuffled)
    for user in USERS[:20]:
        for week in WEEKS[:10]:
            first = weekly_topic(user_id=user, week=week, topics=TOPICS, curriculum_topic=None)
            again = weekly_topic(user_id=user, week=week, topics=shuffled, curriculum_topic=None)
            assert first == again
    # And users do not all get the same topic in one week.
    spread = {weekly_topic(user_id=u, week="2026-W10", topics=TOPICS, curriculum_topic=None)
              for u in USERS}  # fmt: skip
    assert len(spread) > 1


def test_relevance_weights_prefer_core_over_peripheral() -> None:
    counts = Counter(
        weekly_topic(user_id=u, week=w, topics=TOPICS, curriculum_topic=None)
        for u in USERS
        for w in WEEKS
    )
    total = sum(counts.values())
    # Expected shares 3/6, 2/6, 1/6 over 3120 draws; the bands are many sigmas wide.
    assert 0.44 < counts["onboarding"] / total < 0.56
    assert 0.28 < counts["verlof"] / total < 0.39
    assert 0.11 < counts["parkeren"] / total < 0.22
    assert RELEVANCE_WEIGHTS["exclude"] == 0


def test_unknown_relevance_counts_as_standard() -> None:
    topics = [KbTopic("a", "A", learning_relevance=""), KbTopic("b", "B", learning_relevance="x")]
    picks = {weekly_topic(user_id=u, week="2026-W02", topics=topics, curriculum_topic=None)
             for u in USERS}  # fmt: skip
    assert picks == {"a", "b"}


def test_no_eligible_topic_gives_none() -> None:
    only_excluded = [TOPICS[3]]
    assert weekly_topic(user_id="U1", week="2026-W01", topics=[], curriculum_topic=None) is None
    assert (
        weekly_topic(user_id="U1", week="2026-W01", topics=only_excluded, curriculum_topic=None)
        is None
    )


@pytest.mark.parametrize(
    ("user", "week"), [("", "2026-W01"), ("U1", "2026-01"), ("U1", "2026-W54")]
)
def test_bad_input_is_rejected(user: str, week: str) -> None:
    with pytest.raises(KbInputError):
        weekly_topic(user_id=user, week=week, topics=TOPICS, curriculum_topic=None)
