"""Shared data for the quiz tests: topics, question payloads and an injectable clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from shared.store import Relation, Store, Topic

WEEK = "2026-W48"

TOPICS = [
    Topic(
        id="onboarding", label="Onboarding", type="process", learning_relevance="core",
        description=(
            "Nieuwe collega's krijgen in hun eerste week een buddy toegewezen. "
            "De buddy helpt met praktische zaken zoals laptop en toegang. "
            "Na dertig dagen volgt een evaluatiegesprek met de people lead. "
            "Iedere nieuwe collega leest het handboek tijdens de eerste maand."
        ),
    ),
    Topic(
        id="buddy", label="Buddy", type="role",
        description="Een ervaren collega die een nieuwe collega begeleidt tijdens de start.",
    ),
    Topic(
        id="declaraties", label="Declaraties", type="process",
        description=(
            "Onkosten declareer je binnen dertig dagen via het declaratieportaal. "
            "Bonnetjes worden digitaal bewaard voor de administratie."
        ),
    ),
    Topic(
        id="salarisgeheim", label="Salarisgeheim", type="concept",
        learning_relevance="exclude", description="Wordt nooit gevraagd in een quiz.",
    ),
]  # fmt: skip
RELATIONS = [
    Relation(source="onboarding", target="buddy", type="executed_by"),
    Relation(source="declaraties", target="onboarding", type="related_to"),
]


async def seed(store: Store) -> None:
    """Put the test topics and relations in the store."""
    await store.topics.upsert_many(TOPICS)
    await store.relations.upsert_many(RELATIONS)


def question(
    text: str = "Wie begeleidt een nieuwe collega in de eerste week?",
    options: list[str] | None = None,
    correct_index: int = 0,
    explanation: str = "De buddy begeleidt nieuwe collega's in hun eerste week.",
    difficulty: str | None = "easy",
) -> dict[str, Any]:
    """One emit_quiz_questions question (difficulty None leaves the field out)."""
    payload: dict[str, Any] = {
        "question": text,
        "options": options if options is not None else ["De buddy", "De CEO", "De klant", "IT"],
        "correct_index": correct_index,
        "explanation": explanation,
    }
    if difficulty is not None:
        payload["difficulty"] = difficulty
    return payload


def batch(n: int = 10) -> dict[str, Any]:
    """A valid batch of n distinct questions, 4/4/2 easy/medium/hard per ten, answer first."""
    cycle = ["easy", "medium", "easy", "medium", "hard", "easy", "medium", "easy", "medium", "hard"]
    return {
        "questions": [
            question(
                text=f"Wat is stap {i + 1} van de onboarding?",
                options=[f"Juist {i}", f"Fout A{i}", f"Fout B{i}", f"Fout C{i}"],
                explanation=f"Stap {i + 1} staat zo beschreven in het handboek.",
                difficulty=cycle[i % 10],
            )
            for i in range(n)
        ]
    }


class Clock:
    """A settable clock for QuizConfig(clock=...)."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 11, 25, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move time forward."""
        self.now += timedelta(seconds=seconds)
