"""Weekly selection: eligible topics, the week's topic first, the 4/4/2 difficulty mix."""

from __future__ import annotations

from collections import Counter

import pytest

from services.quiz.selection import (
    PickedQuestion,
    QuizUnavailableError,
    difficulty_targets,
    pick_mix,
    select_questions,
    topic_order,
)
from shared.store import QuizQuestion, Store, Topic
from tests.services.quiz.helpers import TOPICS, WEEK, seed


def bank_question(topic: str, n: int, difficulty: str) -> QuizQuestion:
    return QuizQuestion(
        text=f"Vraag {n} ({difficulty}) over {topic}?",
        options=["Juist", "Fout 1", "Fout 2", "Fout 3"],
        correct_index=0,
        explanation="Dit staat zo in het handboek van Respellion.",
        difficulty=difficulty,  # type: ignore[arg-type]
    )


def pool(counts: dict[str, int], topic: str = "onboarding") -> list[PickedQuestion]:
    out = []
    for difficulty, n in counts.items():
        out += [PickedQuestion(topic, topic, bank_question(topic, i, difficulty)) for i in range(n)]
    return out


def test_targets_for_ten_are_four_four_two() -> None:
    assert difficulty_targets(10) == {"easy": 4, "medium": 4, "hard": 2}
    assert sum(difficulty_targets(7).values()) == 7


def test_mix_is_four_four_two_when_the_pool_allows() -> None:
    chosen = pick_mix(pool({"hard": 5, "easy": 6, "medium": 6}), size=10)
    assert Counter(p.question.difficulty for p in chosen) == {"easy": 4, "medium": 4, "hard": 2}
    # Ordered easy → hard for a gentle start.
    assert [p.question.difficulty for p in chosen] == ["easy"] * 4 + ["medium"] * 4 + ["hard"] * 2


def test_mix_falls_back_when_a_difficulty_is_missing() -> None:
    chosen = pick_mix(pool({"easy": 7, "medium": 7}), size=10)
    counts = Counter(p.question.difficulty for p in chosen)
    assert len(chosen) == 10 and counts["hard"] == 0 and counts["easy"] + counts["medium"] == 10
    assert len({p.ref for p in chosen}) == 10


def test_small_pool_gives_a_shorter_quiz() -> None:
    assert len(pick_mix(pool({"easy": 2, "hard": 1}), size=10)) == 3


def test_topic_order_excludes_exclude_and_puts_the_curriculum_topic_first() -> None:
    order = topic_order(user_id="U1", week=WEEK, topics=TOPICS, curriculum_topic="declaraties")
    ids = [t.id for t in order]
    assert ids[0] == "declaraties"
    assert "salarisgeheim" not in ids
    assert sorted(ids) == ["buddy", "declaraties", "onboarding"]
    again = topic_order(
        user_id="U1", week=WEEK, topics=TOPICS[::-1], curriculum_topic="declaraties"
    )
    assert [t.id for t in again] == ids  # deterministic whatever the input order


def test_an_excluded_curriculum_topic_is_not_used() -> None:
    order = topic_order(user_id="U1", week=WEEK, topics=TOPICS, curriculum_topic="salarisgeheim")
    assert "salarisgeheim" not in [t.id for t in order]


async def test_selection_never_uses_excluded_topics(store: Store) -> None:
    await seed(store)
    await store.curriculum.set(WEEK, "onboarding")
    for topic in ("salarisgeheim", "onboarding", "buddy"):
        await store.quiz_banks.add_questions(
            topic,
            [bank_question(topic, i, d) for i in range(4) for d in ("easy", "medium", "hard")],
        )
    week_topic, chosen = await select_questions(store=store, user_id="U1", week=WEEK, size=10)

    assert week_topic == "onboarding"
    assert len(chosen) == 10
    assert all(p.topic_id != "salarisgeheim" for p in chosen)
    assert Counter(p.question.difficulty for p in chosen) == {"easy": 4, "medium": 4, "hard": 2}
    # The week's topic bank covers the whole mix, so it fills the quiz.
    assert {p.topic_id for p in chosen} == {"onboarding"}


async def test_no_eligible_topic_is_a_clear_refusal(store: Store) -> None:
    await store.topics.upsert_many(
        [Topic(id="x", label="X", type="concept", learning_relevance="exclude")]
    )
    with pytest.raises(QuizUnavailableError, match="geen onderwerpen"):
        await select_questions(store=store, user_id="U1", week=WEEK, size=10)
