"""Quiz fixtures: a real SQLite store in a temp dir and the offline quiz handler."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from services.quiz.offline import offline_plans
from shared.llm import LLMRuntime, OfflineProvider
from shared.store import Store, open_store


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    """A fresh SQLite store."""
    opened = await open_store(f"sqlite:///{tmp_path}/quiz.db")
    yield opened
    await opened.close()


@pytest.fixture
def offline_quiz(offline_llm: LLMRuntime) -> Iterator[LLMRuntime]:
    """The offline provider with the quiz service's plans, as the service host injects them."""
    offline_llm.provider = OfflineProvider(offline_plans())
    yield offline_llm
