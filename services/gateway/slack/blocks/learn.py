"""Block Kit for /learn: the article as sections, slides one at a time, the infographic."""

from __future__ import annotations

import json
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    InputBlock,
    MarkdownTextObject,
    PlainTextInputElement,
    SectionBlock,
)
from slack_sdk.models.views import View

from services.gateway.core.learning import LEARN_KINDS
from services.gateway.slack import ids
from services.gateway.slack.blocks.kit import (
    MAX_MESSAGE_BLOCKS,
    Blocks,
    button,
    context,
    escape,
    header,
    section,
    split_text,
    to_mrkdwn,
    truncate,
)
from shared.bus import ContentType

KIND_LABELS = {"article": "Artikel", "slides": "Slides", "infographic": "Infographic"}
REFINE_INPUT_BLOCK = "refine_instructions"
REFINE_INPUT_ACTION = "instructions"


def _str(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def learn_buttons(topic_id: str, *, current: str, admin: bool) -> dict[str, Any] | None:
    """The other formats of this topic, plus Refine for admins (None when nothing to show)."""
    elements = [
        button(label, f"{ids.LEARN_PREFIX}{kind}", topic_id)
        for kind, label in KIND_LABELS.items()
        if kind != current
    ]
    if admin and current == "article":
        elements.append(button("Verfijnen", ids.REFINE_OPEN, topic_id))
    return ActionsBlock(elements=elements).to_dict() if elements else None


def article_blocks(article: dict[str, Any], *, topic_id: str, week: str, admin: bool) -> Blocks:
    """An article as a header, intro, one section per heading and the takeaways."""
    blocks: Blocks = [header(_str(article.get("title")) or topic_id)]
    blocks.append(context(f"Onderwerp van week {escape(week)} · `{escape(topic_id)}`"))
    if intro := _str(article.get("intro")):
        blocks += [section(p) for p in split_text(to_mrkdwn(intro))]
    for part in article.get("sections") or []:
        if not isinstance(part, dict):
            continue
        text = f"*{escape(_str(part.get('heading')))}*\n{to_mrkdwn(_str(part.get('body')))}"
        blocks += [section(p) for p in split_text(text)]
    takeaways = [t for t in article.get("key_takeaways") or [] if _str(t)]
    if takeaways:
        lines = "\n".join(f"• {escape(_str(t))}" for t in takeaways)
        blocks += [section(p) for p in split_text(f"*Kernpunten*\n{lines}")]
    tail = learn_buttons(topic_id, current="article", admin=admin)
    limit = MAX_MESSAGE_BLOCKS - (1 if tail else 0)
    if len(blocks) > limit:
        blocks = [*blocks[: limit - 1], context("(ingekort: het artikel is te lang voor Slack)")]
    return blocks + ([tail] if tail else [])


def slide_blocks(deck: dict[str, Any], *, topic_id: str, index: int) -> Blocks:
    """One slide of a deck with previous / next buttons (index is clamped to the deck)."""
    slides = [s for s in deck.get("slides") or [] if isinstance(s, dict)]
    if not slides:
        return [section("Deze presentatie heeft geen slides.")]
    index = max(0, min(index, len(slides) - 1))
    slide = slides[index]
    bullets = "\n".join(f"• {escape(_str(b))}" for b in slide.get("bullets") or [] if _str(b))
    title = escape(_str(slide.get("title")))
    blocks: Blocks = [
        header(_str(deck.get("title")) or topic_id),
        section(truncate(f"*{index + 1}/{len(slides)} · {title}*\n{bullets}", 2900)),
    ]
    if note := _str(slide.get("speaker_note")):
        blocks.append(context(f":speech_balloon: {escape(truncate(note, 2000))}"))
    nav = []
    if index > 0:
        nav.append(button("◀ Vorige", ids.SLIDE_PREV, _slide_value(topic_id, index - 1)))
    if index < len(slides) - 1:
        nav.append(button("Volgende ▶", ids.SLIDE_NEXT, _slide_value(topic_id, index + 1)))
    if nav:
        blocks.append(ActionsBlock(elements=nav).to_dict())
    if tail := learn_buttons(topic_id, current="slides", admin=False):
        blocks.append(tail)
    return blocks


def _slide_value(topic_id: str, index: int) -> str:
    return json.dumps({"t": topic_id, "i": index}, separators=(",", ":"))


def parse_slide_value(value: str) -> tuple[str, int] | None:
    """(topic id, slide index) from a slide button value; None when malformed."""
    try:
        data = json.loads(value)
        topic, index = data["t"], data["i"]
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(topic, str) or not topic or not isinstance(index, int) or index < 0:
        return None
    return topic, index


def infographic_blocks(info: dict[str, Any], *, topic_id: str, with_image: bool = False) -> Blocks:
    """The infographic: a title card when the PNG is posted below it, else its parts as blocks."""
    headline = _str(info.get("headline")) or topic_id
    blocks: Blocks = [header(headline)]
    if tagline := _str(info.get("tagline")):
        blocks.append(section(escape(tagline)))
    if with_image:
        blocks.append(context(":frame_with_picture: De infographic staat hieronder."))
    else:
        stats = [s for s in info.get("stats") or [] if isinstance(s, dict)][:10]
        if stats:
            fields = [
                MarkdownTextObject(
                    text=truncate(
                        f"*{escape(_str(s.get('value')))}*\n{escape(_str(s.get('label')))}", 1900
                    )
                )
                for s in stats
            ]
            blocks.append(SectionBlock(fields=fields).to_dict())
        steps = [s for s in info.get("steps") or [] if isinstance(s, dict)]
        if steps:
            lines = "\n".join(
                f"{s.get('number', i + 1)}. {escape(_str(s.get('text')))}"
                for i, s in enumerate(steps)
            )
            blocks.append(section(truncate(lines, 2900)))
        if quote := _str(info.get("quote")):
            blocks.append(context(f"“{escape(quote)}”"))
    if tail := learn_buttons(topic_id, current="infographic", admin=False):
        blocks.append(tail)
    return blocks


def refine_modal(*, topic_id: str, channel: str | None) -> dict[str, Any]:
    """The admin's Refine modal: what should change in the article."""
    meta = json.dumps({"t": topic_id, "c": channel or ""}, separators=(",", ":"))
    return View(
        type="modal",
        callback_id=ids.REFINE_VIEW,
        private_metadata=meta,
        title="Artikel verfijnen",
        submit="Verfijnen",
        close="Annuleren",
        blocks=[
            section(f"Kleine, gerichte wijzigingen aan het artikel over `{escape(topic_id)}`."),
            InputBlock(
                block_id=REFINE_INPUT_BLOCK,
                label="Wat moet er anders?",
                element=PlainTextInputElement(
                    action_id=REFINE_INPUT_ACTION,
                    multiline=True,
                    max_length=3000,
                    placeholder="Bijv. noem in de tweede sectie ook de declaratietermijn",
                ),
            ),
        ],
    ).to_dict()


def content_pending_blocks(*, label: str, kind: str) -> Blocks:
    """The placeholder while the content service works."""
    what = KIND_LABELS.get(kind, kind).lower()
    return [
        context(f":hourglass_flowing_sand: _{escape(what)} over {escape(label)} wordt gemaakt…_")
    ]


def content_kind(value: str) -> ContentType | None:
    """The content kind a format button names (None for anything else)."""
    return next((k for k in LEARN_KINDS if k == value), None)
