"""The weekly learning topic of a user: the curriculum first, else a stable weighted hash.

Selection for (user, ISO week):

1. The curriculum topic of the week, when one is scheduled, exists among `topics` and is
   not `exclude`.
2. Otherwise a deterministic draw over the eligible topics (every relevance but
   `exclude`), ordered by id so the input order never matters. Relevance weighs the draw:
   core 3, standard 2, peripheral 1 (an unknown or empty relevance counts as standard).
   The draw is sha256("user\\x1fweek") reduced modulo the total weight and walked over the
   cumulative weights, so the same user and week always get the same topic, different
   users spread over the graph, and core topics come up three times as often as
   peripheral ones.
3. None when no topic is eligible.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from shared.kb.models import KbInputError, TopicLike
from shared.weeks import ISO_WEEK_RE, iso_week

RELEVANCE_WEIGHTS: dict[str, int] = {"core": 3, "standard": 2, "peripheral": 1, "exclude": 0}
"""How strongly each learning relevance is preferred in the hashed draw."""
_DEFAULT_WEIGHT = RELEVANCE_WEIGHTS["standard"]

__all__ = ["RELEVANCE_WEIGHTS", "iso_week", "weekly_topic"]


def _weight(topic: TopicLike) -> int:
    relevance = (topic.learning_relevance or "").strip().lower()
    return RELEVANCE_WEIGHTS.get(relevance, _DEFAULT_WEIGHT)


def weekly_topic(
    *,
    user_id: str,
    week: str,
    topics: Iterable[TopicLike],
    curriculum_topic: str | None,
) -> str | None:
    """The topic id a user learns in an ISO week (curriculum, else weighted hash), or None."""
    if not isinstance(user_id, str) or not user_id.strip():
        raise KbInputError("weekly_topic needs a non-empty user_id")
    if not isinstance(week, str) or not ISO_WEEK_RE.fullmatch(week):
        raise KbInputError(f"week {week!r} is not an ISO week like '2026-W07'")
    weights: dict[str, int] = {}
    for topic in topics:
        weights[topic.id] = _weight(topic)
    if curriculum_topic and weights.get(curriculum_topic, 0) > 0:
        return curriculum_topic
    eligible = sorted((tid, w) for tid, w in weights.items() if w > 0)
    if not eligible:
        return None
    total = sum(w for _, w in eligible)
    digest = hashlib.sha256(f"{user_id}\x1f{week}".encode()).digest()
    point = int.from_bytes(digest[:8], "big") % total
    for topic_id, weight in eligible:
        if point < weight:
            return topic_id
        point -= weight
    raise AssertionError("unreachable: the draw lies within the total weight")
