"""The offline provider with the content handlers: valid, deterministic Dutch content."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.content.generate import KINDS, ensure_content, read_part
from services.content.models import Article
from services.content.offline import offline_plans
from services.content.refine import refine_article
from services.content.topics import LearningTopic, get_topic, resolve_or_create
from shared.llm import LLMRuntime, MemorySink, OfflineProvider
from shared.store import Store, open_store
from tests.services.content.conftest import TOPICS


@pytest.fixture
def offline(offline_llm: LLMRuntime) -> MemorySink:
    offline_llm.provider = OfflineProvider(offline_plans())
    assert isinstance(offline_llm.sink, MemorySink)
    return offline_llm.sink


def content_of(content: object) -> dict[str, object]:
    return {kind: read_part(content, kind).model_dump() for kind in KINDS}  # type: ignore[union-attr,arg-type]


@pytest.mark.parametrize("topic_id", [t.id for t in TOPICS])
async def test_every_tool_gives_valid_dutch_content_marked_offline(
    store: Store, offline: MemorySink, topic_id: str
) -> None:
    topic = await get_topic(store, topic_id)
    assert topic is not None
    for kind in ("article", "slides", "infographic"):
        await ensure_content(store, topic=topic, content_type=kind)
    stored = await store.content.get(topic_id)
    article = read_part(stored, "article")
    assert isinstance(article, Article)
    assert article.sections[0].heading == f"Wat is {topic.label}?"
    assert topic.description.split(".")[0] in article.intro
    assert "Zo pak je het aan" in [s.heading for s in article.sections]
    for kind in KINDS:
        assert stored is not None and getattr(stored, kind)["meta"]["offline"] is True
    assert {r.task for r in offline.records} == {
        "content.article", "content.slides", "content.infographic",
    }  # fmt: skip
    assert all(r.provider == "offline" and r.ok for r in offline.records)


async def test_offline_content_is_deterministic(
    store: Store, offline: MemorySink, tmp_path: Path
) -> None:
    other = await open_store(f"sqlite:///{tmp_path / 'other.db'}")
    try:
        await other.topics.upsert_many(TOPICS)
        for target in (store, other):
            topic = await get_topic(target, "verlof")
            assert topic is not None
            await ensure_content(target, topic=topic, content_type="all")
        first, second = await store.content.get("verlof"), await other.content.get("verlof")
        assert content_of(first) == content_of(second)
        assert first is not None and second is not None
        assert first.infographic["image"]["sha256"] == second.infographic["image"]["sha256"]
    finally:
        await other.close()


async def test_long_labels_and_odd_descriptions_still_validate(
    store: Store, offline: MemorySink
) -> None:
    odd = LearningTopic(
        id="lang",
        label="Een heel erg lang label " * 8,
        description="--- \n# Kop\n* punt zonder punt",
    )
    outcome = await ensure_content(store, topic=odd, content_type="all")
    assert outcome.generated == KINDS


async def test_custom_topic_and_refinement_offline(store: Store, offline: MemorySink) -> None:
    topic = await resolve_or_create(
        store, ref="Ik wil graag meer leren over pair programming?", requested_by="U1"
    )
    assert (topic.id, topic.label, topic.custom) == ("pair-programming", "Pair programming", True)
    await ensure_content(store, topic=topic, content_type="article")
    done = await refine_article(
        store, topic_ref=topic.id, instruction="Maak het luchtiger", admin="U1"
    )
    assert done.offline and done.applied == ("set_intro",)
    assert "Maak het luchtiger" in done.article.intro and "[offline" in done.article.intro


def test_offline_learning_is_drawn_from_the_topics_text() -> None:
    from services.content.offline import article, infographic, slides

    topic = {
        "id": "ouderschapsverlof", "label": "Ouderschapsverlof", "type": "process",
        "description": "Ouderschapsverlof kun je opnemen tot je kind acht jaar is. Je hebt recht "
        "op 26 keer je wekelijkse arbeidsduur. De eerste negen weken betaalt het UWV 70 procent "
        "van je dagloon; Respellion vult dit aan tot 85 procent van je salaris.",
    }  # fmt: skip
    figures = {(s.value, s.label) for s in infographic(topic).stats}
    assert {("26 keer", "je wekelijkse arbeidsduur"), ("70%", "van je dagloon"),
            ("85%", "van je salaris")} <= figures  # fmt: skip
    assert not {"onderwerp per week", "leestijd"} & {label for _, label in figures}
    text = article(topic)
    sentences = [text.intro, *(s.body for s in text.sections)]
    for fact in ("acht jaar is.", "26 keer je wekelijkse arbeidsduur.", "85 procent"):
        assert sum(fact in part for part in sentences) == 1, fact  # said once, not repeated
    for slide in slides(topic).slides:
        assert not any(bullet in slide.speaker_note for bullet in slide.bullets)
