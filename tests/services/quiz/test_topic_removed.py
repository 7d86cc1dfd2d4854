"""A topic the KG owner removes (kb.updated removed_ids) takes its quiz bank along."""

from __future__ import annotations

import asyncio

from shared.bus import KbUpdated
from shared.store import QuizQuestion
from tests.services.quiz.test_flow import Bus, bus  # noqa: F401 - the fixture


def question(i: int) -> QuizQuestion:
    return QuizQuestion(text=f"Vraag {i}?", options=["a", "b", "c", "d"], correct_index=1,
                        explanation="Omdat.", difficulty="medium")  # fmt: skip


async def test_removed_topic_loses_its_bank_over_the_bus(bus: Bus) -> None:  # noqa: F811
    store = bus.ctx.store
    await store.quiz_banks.add_questions("weg", [question(i) for i in range(3)])
    await store.quiz_banks.add_questions("blijft", [question(9)])
    await bus.send(KbUpdated(actor="extractor", kb_hash="abcd1234", removed_ids=["weg"],
                             reason="topic weg deleted"))  # fmt: skip
    for _ in range(200):
        if await store.quiz_banks.get("weg") is None:
            break
        await asyncio.sleep(0.05)
    assert await store.quiz_banks.get("weg") is None
    kept = await store.quiz_banks.get("blijft")
    assert kept is not None and len(kept.questions) == 1
