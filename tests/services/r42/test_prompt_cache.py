"""Prompt caching of a chat turn against the fake Anthropic server, over the sample handbook."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from evals.kb import load_handbook
from services.r42.knowledge import KbCache
from services.r42.turn import chat_turn
from shared.bus import ChatRequest
from shared.llm import LLMRuntime, MemorySink
from shared.llm.caching import min_cacheable_tokens
from shared.store import Store, open_store
from tests.fakes.anthropic_cache import count_tokens
from tests.fakes.anthropic_server import FakeAnthropic, text_reply


@pytest.fixture
async def handbook(tmp_path: Path) -> AsyncIterator[Store]:
    opened = await open_store(f"sqlite:///{tmp_path / 'handbook.db'}")
    await load_handbook(opened)
    yield opened
    await opened.close()


def _cached_prefix(body: dict[str, Any]) -> tuple[str, int]:
    """The request up to its first cache mark (the KB catalogue) and its tokens (the fake's)."""
    first = min(i for i, block in enumerate(body["system"]) if block.get("cache_control"))
    prefix = {"model": body["model"], "tools": body["tools"], "system": body["system"][: first + 1]}
    return str(prefix), count_tokens({**prefix, "messages": []})


async def test_second_turn_reuses_a_cacheable_prefix_and_a_topic_change_busts_it(
    handbook: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    kb = KbCache(handbook)
    try:
        fake_anthropic.enqueue(
            text_reply("Je bouwt pensioen op bij Horizon (zie Pensioenregeling)."),
            text_reply("Je hebt 27 vakantiedagen (zie Vakantiedagen)."),
            text_reply("Je hebt 30 vakantiedagen (zie Vakantiedagen)."),
        )
        ask = lambda text: ChatRequest(user_id="U1", user_name="Ann", text=text)  # noqa: E731
        await chat_turn(store=handbook, kb=kb, request=ask("Hoe werkt het pensioen?"))
        await chat_turn(store=handbook, kb=kb, request=ask("Hoeveel vakantiedagen heb ik?"))
        first, second = fake_anthropic.requests[:2]
        minimum = min_cacheable_tokens(second.body["model"])
        prefix, tokens = _cached_prefix(second.body)
        assert tokens >= minimum, (tokens, minimum)  # the API will really cache it
        assert _cached_prefix(first.body)[0] == prefix  # ... and the second turn reads it
        assert isinstance(fake_llm.sink, MemorySink)
        written, read = fake_llm.sink.records[:2]
        assert (
            written.cache_creation_input_tokens >= tokens and written.cache_read_input_tokens == 0
        )
        assert read.cache_read_input_tokens >= tokens  # the usage the fake API reported
        # The question-specific context and the user come after the cached prefix.
        assert "Hoeveel vakantiedagen" not in prefix and "Ann" not in prefix

        topic = await handbook.topics.get("vakantiedagen")
        assert topic is not None
        changed = topic.model_copy(update={"description": "Je hebt 30 vakantiedagen."})
        await handbook.topics.upsert_many([changed])
        kb.invalidate()
        await chat_turn(store=handbook, kb=kb, request=ask("Hoeveel vakantiedagen heb ik?"))
        third = fake_anthropic.requests[2]
        assert _cached_prefix(third.body)[0] != prefix  # a changed topic busts the cache
        busted = fake_llm.sink.records[2]
        assert busted.cache_read_input_tokens == 0 and busted.cache_creation_input_tokens >= tokens
    finally:
        await kb.aclose()
