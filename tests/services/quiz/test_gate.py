"""The quality gate (every reason), the Fisher–Yates shuffle's remapping and the dedup key."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from services.quiz.gate import (
    balanced_positions,
    catch_all_option,
    gate_batch,
    question_key,
    shuffle_options,
)
from services.quiz.models import GeneratedQuestion, QuizQuestionsInput, quiz_tool
from tests.services.quiz.helpers import batch, question


def parsed(**fields: object) -> GeneratedQuestion:
    return GeneratedQuestion.model_validate(question(**fields))  # type: ignore[arg-type]


def test_a_good_batch_passes() -> None:
    questions = QuizQuestionsInput.model_validate(batch(10)).questions
    assert gate_batch(questions) is None


@pytest.mark.parametrize(
    "options",
    [
        ["De buddy", "de buddy", "De CEO", "IT"],
        ["De buddy", "  De   BUDDY ", "De CEO", "IT"],
        ["Café", "cafe", "Thee", "Water"],
    ],
)
def test_options_that_repeat_ignoring_case_and_spacing_are_rejected(options: list[str]) -> None:
    reason = gate_batch([parsed(), parsed(text="Tweede vraag over onboarding?", options=options)])
    assert reason is not None
    assert reason.startswith("question 2 ")
    assert "not 4 distinct answers" in reason


@pytest.mark.parametrize(
    "catch_all",
    [
        "All of the above",
        "none of the above",
        "Both A and B",
        "both (b) and (c)",
        "Alle bovenstaande",
        "Geen van de bovenstaande",
        "geen van bovenstaande",
        "BEIDE",
        "Beide antwoorden zijn juist",
    ],
)
def test_catch_all_options_are_rejected(catch_all: str) -> None:
    reason = gate_batch([parsed(options=["De buddy", "De CEO", "IT", catch_all])])
    assert reason is not None and "catch-all" in reason and catch_all in reason


@pytest.mark.parametrize(
    "legit", ["Both teams and the board", "Alle collega's", "Geen enkele klant", "Beiden-weg"]
)
def test_ordinary_options_are_not_catch_alls(legit: str) -> None:
    assert not catch_all_option(legit)


def test_short_explanation_is_rejected() -> None:
    reason = gate_batch([parsed(explanation="Zie handboek.")])
    assert reason is not None
    assert "explanation is 13 characters; at least 20 are needed" in reason


def test_question_without_letters_is_rejected() -> None:
    reason = gate_batch([parsed(text="?? !! ...")])
    assert reason is not None and "no letters or digits" in reason


def test_tool_schema_comes_from_the_model() -> None:
    schema = quiz_tool().input_schema
    item = schema["$defs"]["GeneratedQuestion"]
    assert item["properties"]["options"]["minItems"] == 4
    assert item["properties"]["options"]["maxItems"] == 4
    assert item["properties"]["correct_index"]["maximum"] == 3
    assert set(item["required"]) >= {"question", "options", "correct_index", "difficulty"}


def test_shuffle_keeps_the_correct_option_text_under_its_index() -> None:
    rng = random.Random(7)
    original = parsed(options=["Juist", "Fout 1", "Fout 2", "Fout 3"], correct_index=0)
    positions = Counter()
    for _ in range(400):
        shuffled = shuffle_options(original, rng)
        assert shuffled.options[shuffled.correct_index] == "Juist"
        assert sorted(shuffled.options) == sorted(original.options)
        positions[shuffled.correct_index] += 1
    # Seeded: a deterministic count, and every position is used (not stuck at 0).
    assert set(positions) == {0, 1, 2, 3}
    assert max(positions.values()) < 400 * 0.4


def test_shuffle_remaps_a_non_zero_correct_index() -> None:
    original = parsed(options=["Fout 1", "Fout 2", "Juist", "Fout 3"], correct_index=2)
    for seed in range(20):
        shuffled = shuffle_options(original, random.Random(seed))
        assert shuffled.options[shuffled.correct_index] == "Juist"
    assert original.options[2] == "Juist"  # the input is not mutated


def test_a_placed_correct_option_lands_where_asked_and_the_rest_are_shuffled() -> None:
    original = parsed(options=["Fout 1", "Juist", "Fout 2", "Fout 3"], correct_index=1)
    wrong_orders = set()
    for seed in range(40):
        for at in range(4):
            shuffled = shuffle_options(original, random.Random(seed), correct_at=at)
            assert shuffled.correct_index == at and shuffled.options[at] == "Juist"
            assert sorted(shuffled.options) == sorted(original.options)
            wrong_orders.add(tuple(o for o in shuffled.options if o != "Juist"))
    assert len(wrong_orders) == 6  # every order of the three wrong answers occurs


def test_balanced_positions_use_every_position_equally_in_random_order() -> None:
    for count in range(0, 13):
        positions = balanced_positions(count, 4, random.Random(count))
        tally = Counter(positions)
        assert len(positions) == count and set(tally) <= {0, 1, 2, 3}
        assert max(tally.values(), default=0) - min(tally.values(), default=0) <= 1
    orders = {tuple(balanced_positions(8, 4, random.Random(seed))) for seed in range(20)}
    assert len(orders) > 10  # not a fixed rotation


def test_question_key_normalises_case_punctuation_spacing_and_accents() -> None:
    assert question_key("Wat doet de  Buddy?") == question_key("wat doet de buddy")
    assert question_key("Wat is één café-regel?!") == "wat is een cafe regel"
