"""After validation: the quality gate, the Fisher–Yates option shuffle and the dedup key."""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Sequence

from services.quiz.models import MIN_EXPLANATION_CHARS, OPTION_COUNT, GeneratedQuestion
from shared.store import normalise_question_key

# Catch-all options test elimination, not knowledge; they also break under shuffling
# ("both A and B" names positions that no longer exist).
CATCH_ALL_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        r"\ball of (?:the above|these)\b",
        r"\bnone of (?:the above|these)\b",
        r"\bboth\s+\(?[a-d1-4]\)?\s+and\s+\(?[a-d1-4]\)?(?![\w])",
        r"\bboth of (?:the above|these)\b",
        r"\balle\s+(?:de\s+)?bovenstaande\b",
        r"\bgeen\s+van\s+(?:de\s+)?(?:bovenstaande|deze)\b",
        r"\bbeide\b",
    )
)


def fold(text: str) -> str:
    """Lowercase, accents removed, whitespace collapsed: how options are compared."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(plain.casefold().split())


def catch_all_option(option: str) -> bool:
    """Whether an option is an "all/none of the above" style answer (English or Dutch)."""
    folded = fold(option)
    return any(p.search(folded) for p in CATCH_ALL_PATTERNS)


def question_problem(question: GeneratedQuestion) -> str | None:
    """Why one question fails the quality gate, or None when it passes."""
    if not question_key(question.question):
        return "the question text has no letters or digits"
    seen: dict[str, str] = {}
    for option in question.options:
        key = fold(option)
        if key in seen:
            return (
                f"options are not {OPTION_COUNT} distinct answers: {option!r} repeats "
                f"{seen[key]!r} (ignoring case and spacing)"
            )
        seen[key] = option
    for option in question.options:
        if catch_all_option(option):
            return f"option {option!r} is a catch-all answer (all/none of the above, both …)"
    explanation = question.explanation.strip()
    if len(explanation) < MIN_EXPLANATION_CHARS:
        return (
            f"explanation is {len(explanation)} characters; "
            f"at least {MIN_EXPLANATION_CHARS} are needed"
        )
    return None


def gate_batch(questions: Sequence[GeneratedQuestion]) -> str | None:
    """The reason the whole batch is rejected (first failing question), or None."""
    for number, question in enumerate(questions, start=1):
        problem = question_problem(question)
        if problem is not None:
            return f"question {number} ({question.question[:80]!r}): {problem}"
    return None


def balanced_positions(count: int, width: int, rng: random.Random) -> list[int]:
    """`count` answer positions in random order, each of the `width` used equally often (±1)."""
    positions = [i % width for i in range(count)]
    rng.shuffle(positions)
    return positions


def shuffle_options(
    question: GeneratedQuestion, rng: random.Random, *, correct_at: int | None = None
) -> GeneratedQuestion:
    """The question with its options in a uniformly random order and correct_index remapped.

    With `correct_at` the correct option lands there and the others are shuffled around it.
    """
    order = list(range(len(question.options)))
    rng.shuffle(order)  # Fisher–Yates: every permutation equally likely
    if correct_at is not None:
        order.remove(question.correct_index)
        order.insert(correct_at, question.correct_index)
    return question.model_copy(
        update={
            "options": [question.options[i] for i in order],
            "correct_index": order.index(question.correct_index),
        }
    )


def question_key(text: str) -> str:
    """The dedup key: lowercase, accents and punctuation stripped, whitespace collapsed."""
    return normalise_question_key(text)
