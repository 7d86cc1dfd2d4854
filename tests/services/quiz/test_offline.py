"""The offline provider's emit_quiz_questions handler: valid, gate-passing, answer first."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

from services.quiz.gate import gate_batch, question_key
from services.quiz.generation import build_prompt_input, generate_questions
from services.quiz.models import QuizQuestionsInput
from services.quiz.offline import offline_questions
from services.quiz.prompts import QuizPromptInput
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
    # Fewer than asked: the offline model writes what the text supports (one fill-in-the-blank
    # at most) instead of padding; the quiz takes the rest from other topics.
    assert len(batch.questions) == 8
    assert all(q.correct_index == 0 for q in batch.questions)
    assert len({question_key(q.question) for q in batch.questions}) == 8
    assert Counter(q.difficulty for q in batch.questions) == {"easy": 4, "medium": 3, "hard": 1}
    assert sum("ontbreekt" in q.question for q in batch.questions) == 1
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


def test_offline_questions_ask_about_the_texts_facts() -> None:
    request = QuizPromptInput(
        topic_id="ouderschapsverlof", label="Ouderschapsverlof", type="process",
        description="Ouderschapsverlof kun je opnemen tot je kind acht jaar is. Je hebt recht "
                    "op 26 keer je wekelijkse arbeidsduur.",
        count=10, others=["Kilometervergoeding", "Declaraties", "Teamlead", "Onboarding"],
    )  # fmt: skip
    questions = {str(q["question"]): q["options"] for q in offline_questions(request)}
    figure = next(q for q in questions if q.startswith("Welk getal hoort op de plek van ___"))
    assert "26" not in figure and questions[figure][0] == "26"  # type: ignore[index]
    assert len(set(questions[figure])) == 4  # type: ignore[arg-type]
    which = next(q for q in questions if q.startswith("Over welk onderwerp gaat dit"))
    assert "26 keer" in which and "Ouderschapsverlof" not in which
    assert questions[which][0] == "Ouderschapsverlof"  # type: ignore[index]
    assert set(questions[which][1:]) <= {  # type: ignore[index]
        "Kilometervergoeding",
        "Declaraties",
        "Teamlead",
        "Onboarding",
    }  # other topics, not made-up labels, while there are enough of them
    blank = next(q for q in questions if "ontbreekt" in q)
    sentence_words = set(blank.lower().replace('"', " ").split())
    assert not {o.lower() for o in questions[blank][1:]} & sentence_words  # type: ignore[index]
