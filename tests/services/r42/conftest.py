"""Fixtures for the r42 service: a seeded SQLite store, its KB cache, fake-LLM helpers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from services.r42.knowledge import KbCache
from services.r42.offline import offline_plans
from shared.llm import LLMRuntime, OfflineProvider
from shared.store import Content, QuizAttempt, Relation, Store, Topic, open_store
from tests.fakes.anthropic_server import RecordedRequest

WAIT = 15.0
"""Upper bound for waiting on something that should happen (hang protection, not a timing)."""

TOPICS = [
    Topic(id="verlof", label="Verlof", type="process",
          description="Verlof vraag je aan in het HR-portaal, minimaal twee weken vooraf; "
                      "je teamlead keurt het goed."),
    Topic(id="product-owner", label="Product owner", type="role",
          description="Beheert de backlog, stelt prioriteiten en accepteert opgeleverd werk."),
    Topic(id="sprint-review", label="Sprint review", type="process",
          description="Aan het eind van elke sprint laat het team werkende software zien."),
    Topic(id="radicale-transparantie", label="Radicale transparantie", type="concept",
          description="Salarissen, cijfers en beslissingen zijn voor iedereen inzichtelijk."),
    Topic(id="declaraties", label="Declaraties", type="process",
          description="Onkosten declareer je binnen dertig dagen met een foto van de bon."),
    Topic(id="onboarding-buddy", label="Onboarding buddy", type="role",
          description="Een collega die nieuwe medewerkers de eerste maand wegwijs maakt."),
]  # fmt: skip
RELATIONS = [
    Relation(source="sprint-review", target="product-owner", type="executed_by",
             description="De product owner leidt de review."),
    Relation(source="declaraties", target="radicale-transparantie", type="related_to"),
]  # fmt: skip
VERLOF_ARTICLE = {
    "title": "Verlof aanvragen",
    "sections": [
        {"heading": "Zo werkt het", "body": "Open het HR-portaal en kies 'verlof aanvragen'."},
        {"heading": "Bijzonder verlof",
         "body": "Voor ouderschapsverlof geldt een aparte regeling."},
    ],
    "image": "https://example.com/ignored.png",
}  # fmt: skip


async def seed_kb(store: Store) -> None:
    """The small handbook-like KB every r42 test starts from."""
    await store.topics.upsert_many(TOPICS)
    await store.relations.upsert_many(RELATIONS)
    await store.content.put(Content(topic_id="verlof", article=VERLOF_ARTICLE))


def seeded_sqlite(path: Path) -> str:
    """A SQLite store at `path` holding the seed KB, for commands run against its URL."""
    url = f"sqlite:///{path}"

    async def seed() -> None:
        store = await open_store(url)
        try:
            await seed_kb(store)
        finally:
            await store.close()

    asyncio.run(seed())
    return url


async def kb_dump(store: Store) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Topics and relations as plain data (to assert the KB did not change)."""
    topics = [t.model_dump(exclude={"created_at", "updated_at"}) for t in await store.topics.list()]
    relations = [r.model_dump() for r in await store.relations.list()]
    return topics, relations


async def start_quiz(store: Store, user: str) -> None:
    """Give the user an active quiz attempt."""
    await store.quiz_attempts.start(
        QuizAttempt(id=f"att-{user}", user=user, week="2026-W48", question_keys=["q1", "q2"])
    )


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    """A fresh SQLite store with the seed KB."""
    opened = await open_store(f"sqlite:///{tmp_path / 'r42.db'}")
    await seed_kb(opened)
    yield opened
    await opened.close()


@pytest.fixture
async def kb(store: Store) -> AsyncIterator[KbCache]:
    """The KB cache over `store`."""
    cache = KbCache(store)
    yield cache
    await cache.aclose()


@pytest.fixture
def offline_r42(offline_llm: LLMRuntime, kb: KbCache) -> LLMRuntime:
    """The offline provider with R42's plans over `kb`, as the service host injects them."""
    offline_llm.provider = OfflineProvider(offline_plans(lambda: kb.current))
    return offline_llm


def tool_results(request: RecordedRequest) -> list[dict[str, Any]]:
    """The tool_result blocks of the last message of a recorded request."""
    last = request.body["messages"][-1]
    assert last["role"] == "user"
    return [b for b in last["content"] if b.get("type") == "tool_result"]
