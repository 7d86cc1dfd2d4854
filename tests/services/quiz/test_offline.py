"""The offline provider's emit_quiz_questions handler: valid, gate-passing, answer first."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

from services.quiz.gate import gate_batch, question_key
from services.quiz.generation import build_prompt_input, generate_questions
from services.quiz.models import QuizQuestionsInput
from services.quiz.offline import offline_questions
from shared.llm import LLMRuntime
from shared.store import Store
from tests.services.quiz.helpers import seed


async def test_offline_questions_pass_schema_and_gate_with_the_answer_first(store: Store) -> None:
    await seed(store)
    topic = await store.topics.get("onboarding")
    assert topic is not None
    request = await build_prompt_input(store=store, topic=topic, count=10)
    raw = offline_questions(request, seed=1)

    batch = QuizQuestionsInput.model_validate({"questions": raw})
    assert gate_batch(batch.questions) is None
    assert len(batch.questions) == 10
    assert all(q.correct_index == 0 for q in batch.questions)
    assert len({question_key(q.question) for q in batch.questions}) == 10
    assert Counter(q.difficulty for q in batch.questions) == {"easy": 4, "medium": 4, "hard": 2}
    # Built from the request: the description and the related topic appear.
    texts = " ".join(q.question + " ".join(q.options) for q in batch.questions)
    assert "Buddy" in texts and "toegewezen" in texts
    assert offline_questions(request, seed=1) == raw  # deterministic


async def test_offline_generation_end_to_end_and_no_growth_on_repeat(
    store: Store, offline_quiz: LLMRuntime
) -> None:
    await seed(store)
    first = await generate_questions(store=store, topic_id="buddy", rng=random.Random(5))
    assert first.ok and first.offline and first.added
    # With nothing new to say the offline model repeats itself; dedup keeps the bank as is.
    again = await generate_questions(store=store, topic_id="buddy", rng=random.Random(5))
    assert again.ok and again.added == [] and again.duplicates
    bank = await store.quiz_banks.get("buddy")
    assert bank is not None and len(bank.questions) == len(first.added)
    assert all(q.options[q.correct_index] for q in bank.questions)


async def test_offline_honours_the_avoid_list(store: Store) -> None:
    await seed(store)
    topic = await store.topics.get("onboarding")
    assert topic is not None
    request = await build_prompt_input(store=store, topic=topic, count=3)
    first = offline_questions(request, seed=0)
    later = offline_questions(replace(request, avoid=[q["question"] for q in first]), seed=0)
    assert not {q["question"] for q in first} & {q["question"] for q in later}
