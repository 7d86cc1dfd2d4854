"""/learn as Adaptive Cards: article sections, slides with previous / next, the infographic."""

from __future__ import annotations

import base64
import io
from typing import Any

from PIL import Image

from services.gateway.teams import cards, views
from services.gateway.teams import views_learn as vl
from shared.bus import ChatReply, ContentReady, ContentRequested, SourceRef
from shared.config import build_settings
from shared.runtime.service import ServiceContext, Subscription
from shared.store import Content, Topic
from tests.services.gateway.conftest import R42Stub
from tests.services.gateway.harness import start_stub, stop_all
from tests.services.gateway.teams.activities import (
    USER_AAD,
    card_action,
    personal_conversation,
    personal_message,
)
from tests.services.gateway.teams.card_schema import assert_valid_card, card_errors
from tests.services.gateway.teams.conftest import Teams

ARTICLE = {
    "title": "Reiskosten declareren",
    "intro": "Zo krijg je je geld terug.",
    "sections": [
        {"heading": "Wanneer", "body": "Binnen 30 dagen."},
        {"heading": "Hoe", "body": "Via het portaal."},
    ],
    "key_takeaways": ["Bewaar je bonnetjes"],
}
SLIDES = {
    "title": "Reiskosten",
    "slides": [{"title": f"Slide {i + 1}", "bullets": [f"Punt {i + 1}"]} for i in range(3)],
}


def png_b64() -> str:
    buf = io.BytesIO()
    Image.new("RGB", (64, 32), (20, 90, 160)).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


INFOGRAPHIC = {
    "headline": "Reiskosten in 3 stappen",
    "tagline": "Snel geregeld",
    "image": {"base64": png_b64()},
}


def test_every_card_builder_makes_valid_1_5_cards() -> None:
    q = vl.QuestionView(
        0, 3, "Wat is een buddy?", ("Een collega", "Een tool", "Een team", "Een regel")
    )
    reply = ChatReply(
        text="Antwoord **vet**", sources=[SourceRef(id="t", label="Onboarding")], offline=True
    )
    built: list[dict[str, Any]] = [
        views.help_card(),
        views.answer_card(reply, turn_id="turn-1"),
        vl.article_card(ARTICLE, topic_id="t-reis", week="2026-W49"),
        vl.slide_card(SLIDES, topic_id="t-reis", index=1),
        vl.infographic_card(INFOGRAPHIC, topic_id="t-reis", with_image=True),
        vl.infographic_card(
            {"headline": "X", "stats": [{"value": "3", "label": "stappen"}]},
            topic_id="t",
            with_image=False,
        ),
        vl.question_card(q, attempt_id="att-1"),
        vl.locked_card(q, choice=2),
        vl.verdict_card(q, choice=2, correct=False, correct_index=0, explanation="Omdat."),
        vl.final_card(score=2, count=3, week="2026-W49"),
        cards.notice("Let op", warning=True),
    ]
    for card in built:
        assert_valid_card(card)


def test_the_schema_check_catches_a_broken_card() -> None:
    assert card_errors(
        {"type": "AdaptiveCard", "version": "1.5", "body": [{"type": "TextBlok", "text": "x"}]}
    )
    assert card_errors({"type": "AdaptiveCard", "version": "1.6", "body": []})


def test_a_huge_answer_is_shortened_to_fit_teams() -> None:
    card = views.answer_card(ChatReply(text="lang " * 20_000), turn_id="t")
    assert cards.card_size(card) <= cards.MAX_CARD_BYTES
    assert_valid_card(card)
    assert card["actions"]  # the feedback buttons survive


async def start_content_service(teams: Teams) -> ServiceContext:
    async def on_requested(event: ContentRequested) -> None:
        await stub.store.content.put(
            Content(
                topic_id=event.topic_id, article=ARTICLE, slides=SLIDES, infographic=INFOGRAPHIC
            )
        )
        from shared.bus import publish_event

        await publish_event(
            stub.broker,
            ContentReady.caused_by(
                event, actor="content", topic_id=event.topic_id,
                content_type=event.content_type, ok=True,
                content_ref=event.topic_id, reply_to=event.reply_to,
            ),
            namespace=stub.namespace,
        )  # fmt: skip

    stub = await start_stub(
        "content",
        build_settings(),
        namespace=teams.namespace,
        subscriptions=[Subscription(ContentRequested, "content-req", on_requested)],
    )
    return stub


async def test_learn_article_slides_and_infographic(teams: Teams, r42: R42Stub) -> None:
    await teams.ctx.store.topics.upsert_many(
        [Topic(id="t-reis", label="Reiskosten", type="process", description="Declareren.")]
    )
    content = await start_content_service(teams)
    try:
        url, conv = teams.connector.url, personal_conversation(USER_AAD)
        await teams.post(personal_message(url, "learn"))
        article = await teams.connector.wait_for(
            lambda c: c.method == "PUT" and "Reiskosten declareren" in c.card_text,
            what="the article",
        )
        assert "Wanneer" in article.card_text and "Bewaar je bonnetjes" in article.card_text

        await teams.post(personal_message(url, "learn slides"))
        deck = await teams.connector.wait_for(
            lambda c: c.method == "PUT" and "1/3" in c.card_text, what="slide 1"
        )
        nxt = [a for a in _actions(deck.cards[0]) if a["verb"] == "learn.slide"]
        assert [a["title"] for a in nxt] == ["Volgende ▶"]
        status, body = await teams.post(
            card_action(url, "learn.slide", nxt[0]["data"], reply_to_id=deck.activity_id)
        )
        assert status == 200 and "2/3" in str(body["value"])  # the card refreshes in place
        assert_valid_card(body["value"])
        titles = [a["title"] for a in _actions(body["value"]) if a["verb"] == "learn.slide"]
        assert titles == ["◀ Vorige", "Volgende ▶"]

        await teams.post(personal_message(url, "learn infographic"))
        info = await teams.connector.wait_for(
            lambda c: any(
                a.get("contentType") == "image/png" for a in c.activity.get("attachments") or []
            ),
            what="the infographic image",
        )
        assert info.conversation_id == conv and "Reiskosten in 3 stappen" in info.card_text
        image = next(a for a in info.activity["attachments"] if a["contentType"] == "image/png")
        assert image["contentUrl"] == f"data:image/png;base64,{INFOGRAPHIC['image']['base64']}"
    finally:
        await stop_all(content)


def _actions(node: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if node.get("type") == "Action.Execute":
            found.append(node)
        for value in node.values():
            found += _actions(value)
    elif isinstance(node, list):
        for value in node:
            found += _actions(value)
    return found
