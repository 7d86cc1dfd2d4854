"""Generation through the fake Anthropic server: forced tool, gate, shuffle, dedup, bank."""

from __future__ import annotations

import random

import pytest

from services.quiz.generation import generate_questions
from services.quiz.models import TOOL_NAME
from services.quiz.prompts import PROMPT_VERSION
from shared.errors import BadInputError, NotFoundError
from shared.llm import LLMHttpError, LLMRuntime
from shared.store import Store
from tests.fakes.anthropic_server import FakeAnthropic, overloaded, tool_reply
from tests.services.quiz.helpers import batch, question, seed


@pytest.fixture
async def seeded(store: Store) -> Store:
    await seed(store)
    return store


async def bank_texts(store: Store, topic_id: str = "onboarding") -> list[str]:
    bank = await store.quiz_banks.get(topic_id)
    return [q.text for q in bank.questions] if bank else []


async def test_generation_forces_the_tool_and_stores_shuffled_questions(
    seeded: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(tool_reply(TOOL_NAME, batch(10)))
    result = await generate_questions(
        store=seeded, topic_id="onboarding", count=10, rng=random.Random(3)
    )

    assert result.ok and result.rejected is None and not result.offline
    assert len(result.added) == 10 and result.duplicates == []
    body = fake_anthropic.requests[0].body
    assert body["tool_choice"] == {"type": "tool", "name": TOOL_NAME}
    assert body["tools"][0]["input_schema"]["$defs"]["GeneratedQuestion"]
    assert "Onboarding" in str(body["messages"]) and "Buddy" in str(body["messages"])
    bank = await seeded.quiz_banks.get("onboarding")
    assert bank is not None and len(bank.questions) == 10
    for i, stored in enumerate(bank.questions):
        # The model always put the answer first; the stored correct index follows the text.
        assert stored.options[stored.correct_index] == f"Juist {i}"
        assert stored.prompt_version == PROMPT_VERSION
    assert {q.correct_index for q in bank.questions} != {0}


async def test_same_seed_same_positions(
    store: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    await seed(store)
    fake_anthropic.enqueue(tool_reply(TOOL_NAME, batch(10)), tool_reply(TOOL_NAME, batch(10)))
    first = await generate_questions(store=store, topic_id="onboarding", rng=random.Random(11))
    await store.quiz_banks.delete("onboarding")
    second = await generate_questions(store=store, topic_id="onboarding", rng=random.Random(11))
    assert [q.correct_index for q in first.added] == [q.correct_index for q in second.added]


async def test_regeneration_with_the_same_output_grows_the_bank_by_zero(
    seeded: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(tool_reply(TOOL_NAME, batch(10)), tool_reply(TOOL_NAME, batch(10)))
    first = await generate_questions(store=seeded, topic_id="onboarding")
    before = await bank_texts(seeded)
    again = await generate_questions(store=seeded, topic_id="onboarding")

    assert len(first.added) == 10
    assert again.ok and again.added == [] and len(again.duplicates) == 10
    assert await bank_texts(seeded) == before
    # The second request told the model what the bank already holds.
    assert "Wat is stap 1 van de onboarding?" in str(fake_anthropic.requests[1].body["messages"])


async def test_duplicates_by_normalised_key_are_dropped_within_and_across_batches(
    seeded: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(
        tool_reply(TOOL_NAME, {"questions": [question(text="Wie is je buddy?")]}),
        tool_reply(
            TOOL_NAME,
            {"questions": [
                question(text="wie is je BUDDY"),  # same key as the stored one
                question(text="Wat doet de buddy?"),
                question(text="Wat doet de buddy ?!"),  # same key within the batch
            ]},
        ),
    )  # fmt: skip
    await generate_questions(store=seeded, topic_id="onboarding")
    result = await generate_questions(store=seeded, topic_id="onboarding")

    assert [q.text for q in result.added] == ["Wat doet de buddy?"]
    assert result.duplicates == ["wie is je BUDDY", "Wat doet de buddy ?!"]
    assert await bank_texts(seeded) == ["Wie is je buddy?", "Wat doet de buddy?"]


GATE_CASES = {
    "duplicate options": (
        question(options=["De buddy", "de  buddy", "De CEO", "IT"]),
        "not 4 distinct answers",
    ),
    "catch-all (en)": (question(options=["De buddy", "De CEO", "IT", "None of the above"]),
                       "catch-all"),
    "catch-all (nl)": (question(options=["De buddy", "De CEO", "IT", "Alle bovenstaande"]),
                       "catch-all"),
    "beide": (question(options=["De buddy", "De CEO", "IT", "Beide"]), "catch-all"),
    "short explanation": (question(explanation="Klopt."), "explanation is 6 characters"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(GATE_CASES))
async def test_gate_rejects_the_whole_batch_and_leaves_the_bank_unchanged(
    case: str, seeded: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    bad, expected = GATE_CASES[case]
    fake_anthropic.enqueue(
        tool_reply(TOOL_NAME, {"questions": [question(text="Eerst goed?"), bad]})
    )
    result = await generate_questions(store=seeded, topic_id="onboarding")

    assert not result.ok and result.added == []
    assert result.rejected is not None
    assert result.rejected.startswith("question 2 ") and expected in result.rejected
    assert await seeded.quiz_banks.get("onboarding") is None  # not even the good question


SCHEMA_CASES = {
    "three options": (question(options=["A-optie", "B-optie", "C-optie"]),
                      "question 1: options: List should have at least 4 items"),
    "index out of range": (question(correct_index=4),
                           "question 1: correct_index: Input should be less than or equal to 3"),
    "missing difficulty": (question(difficulty=None), "question 1: difficulty: Field required"),
    "unknown difficulty": (question(difficulty="expert"), "question 1: difficulty: Input should"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(SCHEMA_CASES))
async def test_schema_violations_are_rejected_with_a_clear_reason(
    case: str, seeded: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(tool_reply(TOOL_NAME, batch(2)))
    await generate_questions(store=seeded, topic_id="onboarding")
    before = await bank_texts(seeded)

    bad, expected = SCHEMA_CASES[case]
    fake_anthropic.enqueue(tool_reply(TOOL_NAME, {"questions": [bad]}))
    result = await generate_questions(store=seeded, topic_id="onboarding")

    assert not result.ok
    assert result.rejected is not None
    assert result.rejected.startswith("the model's questions failed validation: ")
    assert expected in result.rejected
    assert await bank_texts(seeded) == before
    # Validation failures are not retried: one request per generation.
    assert len(fake_anthropic.requests) == 2


async def test_transient_failure_propagates_and_changes_nothing(
    seeded: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(*[overloaded() for _ in range(5)])
    with pytest.raises(LLMHttpError) as caught:
        await generate_questions(store=seeded, topic_id="onboarding")
    assert caught.value.transient
    assert await seeded.quiz_banks.get("onboarding") is None


async def test_bad_arguments_are_refused_before_any_call(
    seeded: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    with pytest.raises(NotFoundError, match="topic 'nope' does not exist"):
        await generate_questions(store=seeded, topic_id="nope")
    with pytest.raises(BadInputError, match="count must be between 1 and 20"):
        await generate_questions(store=seeded, topic_id="onboarding", count=0)
    assert fake_anthropic.requests == []
