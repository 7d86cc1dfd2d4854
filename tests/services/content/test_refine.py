"""Admin refinement through patch tools against the fake Anthropic server."""

from __future__ import annotations

from typing import Any

import pytest

from services.content.generate import ensure_content
from services.content.prompts import PROMPT_VERSION
from services.content.refine import refine_article
from services.content.topics import get_topic
from shared.errors import BadInputError, NotFoundError
from shared.llm import LLMRuntime
from shared.store import Store
from tests.fakes.anthropic_server import FakeAnthropic, Reply, tool_reply
from tests.services.content.conftest import ARTICLE

TOPIC = "radicale-transparantie"
BODY = "Zin een. Zin twee. Zin drie."


def multi_tool_reply(*uses: tuple[str, dict[str, Any]]) -> Reply:
    blocks = [
        {"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": tool_input}
        for i, (name, tool_input) in enumerate(uses)
    ]
    return Reply(content=blocks, stop_reason="tool_use")


async def with_article(store: Store, fake: FakeAnthropic) -> None:
    fake.enqueue(tool_reply("emit_learning_article", ARTICLE))
    found = await get_topic(store, TOPIC)
    assert found is not None
    await ensure_content(store, topic=found, content_type="article")


async def test_several_patches_in_one_reply_are_applied_in_order_and_stored(
    store: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    await with_article(store, fake_anthropic)
    fake_anthropic.enqueue(
        multi_tool_reply(
            ("set_intro", {"intro": "Korter."}),
            ("remove_section", {"heading": "waarom"}),
            ("add_section", {"heading": "Valkuilen", "body": BODY, "position": "start"}),
        )
    )
    done = await refine_article(
        store, topic_ref="Radicale transparantie", instruction="Korter, met valkuilen", admin="U1"
    )
    assert done.applied == ("set_intro", "remove_section", "add_section")
    assert [s.heading for s in done.article.sections] == ["Valkuilen", "Wat het is", "Hoe"]

    body = fake_anthropic.requests[-1].body
    assert body["tool_choice"] == {"type": "any"}
    assert [t["name"] for t in body["tools"]] == [
        "set_intro", "set_section", "add_section", "remove_section", "replace_takeaways",
    ]  # fmt: skip
    prompt = body["messages"][0]["content"]
    assert "Korter, met valkuilen" in prompt and ARTICLE["sections"][1]["body"] in prompt

    stored = await store.content.get(TOPIC)
    assert stored is not None and stored.article["intro"] == "Korter."
    meta = stored.article["meta"]
    assert meta["refinements"] == 1 and meta["refined_by"] == "U1"
    assert meta["prompt_version"] == PROMPT_VERSION  # generation provenance is kept


async def test_an_invalid_result_is_rejected_and_the_article_is_unchanged(
    store: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    await with_article(store, fake_anthropic)
    before = await store.content.get(TOPIC)
    fake_anthropic.enqueue(
        multi_tool_reply(("set_intro", {"intro": "Nieuw."}), ("remove_section", {"heading": "Hoe"}))
    )
    with pytest.raises(BadInputError, match="rejected as a whole"):
        await refine_article(store, topic_ref=TOPIC, instruction="Haal 'Hoe' weg", admin="U1")
    assert await store.content.get(TOPIC) == before


async def test_refining_a_topic_without_an_article_is_a_clear_error(
    store: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    with pytest.raises(NotFoundError, match="'verlof' has no article to refine yet"):
        await refine_article(store, topic_ref="verlof", instruction="Korter", admin="U1")
    with pytest.raises(NotFoundError, match="no topic 'bestaat-niet'"):
        await refine_article(store, topic_ref="bestaat-niet", instruction="Korter", admin="U1")
    assert fake_anthropic.requests == []


@pytest.mark.parametrize(("instruction", "admin"), [("   ", "U1"), ("x" * 4001, "U1"), ("ok", " ")])
async def test_bad_refinement_input_makes_no_call(
    store: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime, instruction: str, admin: str
) -> None:
    await with_article(store, fake_anthropic)
    with pytest.raises(BadInputError):
        await refine_article(store, topic_ref=TOPIC, instruction=instruction, admin=admin)
    assert len(fake_anthropic.requests) == 1  # only the generation
