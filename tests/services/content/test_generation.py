"""Generation through forced tools against the fake Anthropic server, cached in SQLite."""

from __future__ import annotations

from typing import Any

import pytest

from services.content.generate import ensure_content, part_png, read_part
from services.content.models import Article, Infographic, LearningBundle, SlideDeck
from services.content.prompts import PROMPT_VERSION
from services.content.topics import LearningTopic, get_topic
from shared.errors import BadInputError
from shared.llm import LLMRuntime, LLMValidationError
from shared.store import Store
from tests.fakes.anthropic_server import FakeAnthropic, tool_reply
from tests.services.content.conftest import ARTICLE, INFOGRAPHIC, SLIDES, article
from tests.services.content.conftest import infographic as make_info
from tests.services.content.conftest import slides as make_slides

TOPIC = "radicale-transparantie"


async def topic(store: Store) -> LearningTopic:
    found = await get_topic(store, TOPIC)
    assert found is not None
    return found


def without_meta(part: dict[str, Any] | None) -> dict[str, Any]:
    assert part is not None
    return {k: v for k, v in part.items() if k not in ("meta", "image")}


async def test_article_uses_the_forced_tool_and_the_model_schema(
    store: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(tool_reply("emit_learning_article", ARTICLE))
    subject = await topic(store)
    outcome = await ensure_content(store, topic=subject, content_type="article")

    assert outcome.generated == ("article",)
    (request,) = fake_anthropic.requests
    body = request.body
    assert body["tool_choice"] == {"type": "tool", "name": "emit_learning_article"}
    assert body["tools"][0]["input_schema"] == Article.model_json_schema()
    assert "Radicale transparantie" in body["messages"][0]["content"]
    assert "Alle informatie is open." in body["messages"][0]["content"]
    stored = await store.content.get(TOPIC)
    assert stored is not None and without_meta(stored.article) == ARTICLE
    meta = stored.article["meta"]
    assert meta["prompt_version"] == PROMPT_VERSION and stored.prompt_version == PROMPT_VERSION
    assert meta["topic_fingerprint"] == subject.fingerprint == stored.topic_fingerprint
    assert meta["offline"] is False and meta["generated_at"]
    assert stored.slides is None and stored.infographic is None


async def test_cache_hit_makes_no_request_and_force_regenerates(
    store: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    subject = await topic(store)
    fake_anthropic.enqueue(tool_reply("emit_learning_article", ARTICLE))
    await ensure_content(store, topic=subject, content_type="article")
    first = await store.content.get(TOPIC)

    cached = await ensure_content(store, topic=subject, content_type="article")
    assert cached.generated == () and len(fake_anthropic.requests) == 1
    assert cached.content == first

    newer = article(title="Alles open")
    fake_anthropic.enqueue(tool_reply("emit_learning_article", newer))
    forced = await ensure_content(store, topic=subject, content_type="article", force=True)
    assert forced.generated == ("article",) and len(fake_anthropic.requests) == 2
    stored = await store.content.get(TOPIC)
    assert stored is not None and without_meta(stored.article) == newer
    assert stored.article["meta"]["prompt_version"] == PROMPT_VERSION


async def test_all_is_one_call_and_stores_three_parts_with_the_picture(
    store: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    bundle = {"article": ARTICLE, "slides": SLIDES, "infographic": INFOGRAPHIC}
    fake_anthropic.enqueue(tool_reply("emit_learning_all", bundle))
    outcome = await ensure_content(store, topic=await topic(store), content_type="all")

    assert outcome.generated == ("article", "slides", "infographic")
    (request,) = fake_anthropic.requests
    assert request.body["tools"][0]["input_schema"] == LearningBundle.model_json_schema()
    stored = await store.content.get(TOPIC)
    assert isinstance(read_part(stored, "slides"), SlideDeck)
    assert isinstance(read_part(stored, "infographic"), Infographic)
    for kind in ("article", "slides", "infographic"):
        assert stored is not None and getattr(stored, kind)["meta"]["prompt_version"] == (
            PROMPT_VERSION
        )
    png = part_png(stored)
    assert png is not None and png.startswith(b"\x89PNG\r\n\x1a\n")
    assert stored is not None and stored.infographic["image"]["width"] == 1080
    # Every part is cached now: asking for any of them calls nobody.
    for kind in ("slides", "infographic", "all"):
        again = await ensure_content(store, topic=await topic(store), content_type=kind)
        assert again.generated == ()
    assert len(fake_anthropic.requests) == 1


async def test_missing_parts_get_their_own_tools(
    store: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(tool_reply("emit_learning_article", ARTICLE))
    await ensure_content(store, topic=await topic(store), content_type="article")
    fake_anthropic.enqueue(
        tool_reply("emit_learning_slides", SLIDES),
        tool_reply("emit_learning_infographic", INFOGRAPHIC),
    )
    outcome = await ensure_content(store, topic=await topic(store), content_type="all")
    assert outcome.generated == ("slides", "infographic")
    chosen = [r.body["tool_choice"]["name"] for r in fake_anthropic.requests]
    assert chosen == ["emit_learning_article", "emit_learning_slides", "emit_learning_infographic"]


SECTIONS_2 = article(sections=ARTICLE["sections"][:2])
SHORT_BODY = article(
    sections=[*ARTICLE["sections"][:2], {"heading": "Kort", "body": "Eén zin. Twee zinnen."}]
)


@pytest.mark.parametrize(
    ("kind", "tool", "payload", "message"),
    [
        ("article", "emit_learning_article", SECTIONS_2, "at least 3 items"),
        ("article", "emit_learning_article", SHORT_BODY, "needs at least 3 sentences, has 2"),
        ("article", "emit_learning_article", article(key_takeaways=["Een."]), "at least 2 items"),
        ("slides", "emit_learning_slides", make_slides(slides=SLIDES["slides"][:3]),
         "at least 4 items"),
        ("infographic", "emit_learning_infographic",
         make_info(headline="een twee drie vier vijf zes zeven acht negen"),
         "at most 8 words allowed, has 9"),
        ("infographic", "emit_learning_infographic", make_info(tagline=" ".join(["woord"] * 16)),
         "at most 15 words allowed, has 16"),
        ("infographic", "emit_learning_infographic", make_info(stats=INFOGRAPHIC["stats"][:2]),
         "at least 3 items"),
        ("infographic", "emit_learning_infographic", make_info(steps=INFOGRAPHIC["steps"][:2]),
         "at least 3 items"),
        ("infographic", "emit_learning_infographic",
         make_info(steps=[{"number": n, "text": "Doe iets."} for n in (1, 3, 4)]),
         "numbered 1..3"),
        ("infographic", "emit_learning_infographic", make_info(stats=[{"value": "3"}] * 3),
         "Field required"),
        ("infographic", "emit_learning_infographic", make_info(theme="neon"), "ocean"),
        ("all", "emit_learning_all",
         {"article": ARTICLE, "slides": make_slides(slides=[]), "infographic": INFOGRAPHIC},
         "at least 4 items"),
    ],
)  # fmt: skip
async def test_a_violating_output_is_rejected_and_nothing_is_cached(
    store: Store,
    fake_anthropic: FakeAnthropic,
    fake_llm: LLMRuntime,
    kind: str,
    tool: str,
    payload: dict[str, Any],
    message: str,
) -> None:
    fake_anthropic.enqueue(tool_reply(tool, payload))
    with pytest.raises(LLMValidationError, match="broke the content rules") as info:
        await ensure_content(store, topic=await topic(store), content_type=kind)
    assert message in str(info.value)
    assert info.value.transient is False
    assert await store.content.get(TOPIC) is None


async def test_a_failure_after_a_good_part_stores_neither(
    store: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(tool_reply("emit_learning_infographic", INFOGRAPHIC))
    await ensure_content(store, topic=await topic(store), content_type="infographic")
    fake_anthropic.enqueue(
        tool_reply("emit_learning_article", ARTICLE),
        tool_reply("emit_learning_slides", make_slides(slides=[])),
    )
    with pytest.raises(LLMValidationError):
        await ensure_content(store, topic=await topic(store), content_type="all")
    stored = await store.content.get(TOPIC)
    assert stored is not None and stored.article is None and stored.slides is None


async def test_unknown_content_type_is_bad_input(store: Store, fake_anthropic: FakeAnthropic,
                                                 fake_llm: LLMRuntime) -> None:  # fmt: skip
    with pytest.raises(BadInputError, match="unknown content type 'video'"):
        await ensure_content(store, topic=await topic(store), content_type="video")
    assert fake_anthropic.requests == []
