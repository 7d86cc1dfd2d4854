"""Fixtures for the content service tests: a real SQLite store, topics, valid model outputs."""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from shared.llm import reset_llm
from shared.store import Store, Topic, open_store

ARTICLE: dict[str, Any] = {
    "title": "Radicale transparantie",
    "intro": "Bij Respellion is alles open. Zo werkt dat.",
    "sections": [
        {
            "heading": "Wat het is",
            "body": "Alles is open. Salarissen zijn zichtbaar. Beslissingen ook.",
        },
        {
            "heading": "Waarom",
            "body": "Vertrouwen groeit. Iedereen kan meedenken. Fouten zie je sneller.",
        },
        {"heading": "Hoe", "body": "Lees het handboek. Vraag door. Deel wat je weet."},
    ],
    "key_takeaways": ["Alles is open.", "Vraag door als iets onduidelijk is."],
}
SLIDES: dict[str, Any] = {
    "title": "Radicale transparantie",
    "slides": [
        {"title": f"Slide {n}", "bullets": ["Punt een", "Punt twee"], "speaker_note": "Vertel dit."}
        for n in range(1, 5)
    ],
}
INFOGRAPHIC: dict[str, Any] = {
    "headline": "Alles open, iedereen aan boord",
    "tagline": "Wat radicale transparantie voor jouw werk betekent",
    "stats": [
        {"value": "100%", "label": "open salarissen"},
        {"value": "3", "label": "stappen"},
        {"value": "5 min", "label": "leestijd"},
    ],
    "steps": [
        {"number": 1, "text": "Lees het handboek."},
        {"number": 2, "text": "Vraag door."},
        {"number": 3, "text": "Deel wat je weet."},
    ],
    "quote": "Transparantie begint bij jezelf.",
    "theme": "ocean",
}  # fmt: skip


def article(**changes: Any) -> dict[str, Any]:
    """A valid article dict with some fields replaced."""
    return {**copy.deepcopy(ARTICLE), **changes}


def slides(**changes: Any) -> dict[str, Any]:
    """A valid slide deck dict with some fields replaced."""
    return {**copy.deepcopy(SLIDES), **changes}


def infographic(**changes: Any) -> dict[str, Any]:
    """A valid infographic dict with some fields replaced."""
    return {**copy.deepcopy(INFOGRAPHIC), **changes}


TOPICS = [
    Topic(id="radicale-transparantie", label="Radicale transparantie", type="concept",
          description="Alle informatie is open.", learning_relevance="core"),
    Topic(id="verlof", label="Verlof", type="process", description="Hoe je verlof aanvraagt."),
    Topic(id="lunchmenu", label="Lunchmenu", type="concept", learning_relevance="exclude"),
]  # fmt: skip


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[Store]:
    """A fresh SQLite store with three topics."""
    opened = await open_store(f"sqlite:///{tmp_path / 'content.db'}")
    await opened.topics.upsert_many(TOPICS)
    yield opened
    await opened.close()


@pytest.fixture(autouse=True)
def _forget_offline_handlers() -> Any:
    """The LLM runtime is process-wide: leave none behind for other test modules."""
    yield
    reset_llm()
