"""The quiz rubric's checks on hand-made questions (each must be able to fail)."""

from __future__ import annotations

from evals.suites.quiz import banned_hits, max_share, near_duplicates
from shared.store import QuizQuestion

BANNED = ["alle bovenstaande", "as an ai", "todo"]


def question(text: str, *, options: list[str] | None = None, explanation: str = "Omdat het zo is.",
             correct: int = 0) -> QuizQuestion:  # fmt: skip
    return QuizQuestion(
        key=text.lower(), text=text, options=options or ["a", "b", "c", "d"],
        correct_index=correct, explanation=explanation, difficulty="easy",
    )  # fmt: skip


def test_banned_phrases_match_whole_words_in_text_options_and_explanation() -> None:
    assert banned_hits(question("Wat klopt?", options=["Alle bovenstaande", "b", "c", "d"]),
                       BANNED) == ["alle bovenstaande"]  # fmt: skip
    assert banned_hits(question("Wat klopt?", explanation="As an AI I think so."), BANNED) == [
        "as an ai"
    ]
    # "todo" inside another word is not the phrase.
    assert banned_hits(question("Wat betekent de afkorting todolijst?"), BANNED) == []
    assert banned_hits(question("Wat staat er nog op de TODO?"), BANNED) == ["todo"]


def test_near_duplicates_ignore_case_and_punctuation_but_not_different_questions() -> None:
    pairs = near_duplicates(
        [
            question("Wie keurt je declaratie goed?"),
            question("wie keurt je declaratie goed"),
            question("Hoeveel vakantiedagen krijg je per jaar?"),
        ],
        0.9,
    )
    assert pairs == [("Wie keurt je declaratie goed?", "wie keurt je declaratie goed")]


def test_max_share_is_the_most_common_answer_position() -> None:
    assert max_share([0, 1, 2, 3]) == 0.25
    assert max_share([0, 0, 0, 1]) == 0.75
    assert max_share([]) is None
