"""The cards of /learn (article, slides, infographic) and of the quiz."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from services.gateway.teams.cards import (
    Card,
    Element,
    action_set,
    card,
    execute,
    facts,
    heading,
    text,
    truncate,
)
from services.gateway.teams.core import LETTERS, QuestionView
from services.gateway.teams.views import VERB_LEADERBOARD, VERB_LEARN, VERB_QUIZ_ANSWER, VERB_SLIDE

KIND_LABELS = {"article": "Artikel", "slides": "Slides", "infographic": "Infographic"}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_INLINE_PNG = 1024 * 1024
"""Teams shows inline images up to 1 MB."""


def _str(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _other_formats(topic_id: str, current: str) -> Element:
    return action_set(
        [
            execute(label, VERB_LEARN, {"topic": topic_id, "kind": kind})
            for kind, label in KIND_LABELS.items()
            if kind != current
        ]
    )


def pending_card(*, label: str, kind: str) -> Card:
    """The placeholder while the content service works."""
    return card([text(f"{KIND_LABELS.get(kind, kind)} over **{label}** wordt gemaakt…")])


def article_card(article: dict[str, Any], *, topic_id: str, week: str) -> Card:
    """An article: title, intro, one block per section, the takeaways."""
    body: list[Element] = [heading(_str(article.get("title")) or topic_id)]
    body.append(text(f"Onderwerp van week {week}", subtle=True, size="Small"))
    if intro := _str(article.get("intro")):
        body.append(text(intro))
    for part in article.get("sections") or []:
        if isinstance(part, dict):
            body.append(text(_str(part.get("heading")), weight="Bolder"))
            body.append(text(_str(part.get("body"))))
    takeaways = [_str(t) for t in article.get("key_takeaways") or [] if _str(t)]
    if takeaways:
        body.append(text("Kernpunten", weight="Bolder"))
        body.append(text("\n".join(f"- {t}" for t in takeaways)))
    body.append(_other_formats(topic_id, "article"))
    return card(body)


def slide_card(deck: dict[str, Any], *, topic_id: str, index: int) -> Card:
    """One slide with previous / next (each click answers with the neighbouring slide)."""
    slides = [s for s in deck.get("slides") or [] if isinstance(s, dict)]
    if not slides:
        return card([text("Deze presentatie heeft geen slides.")])
    index = max(0, min(index, len(slides) - 1))
    slide = slides[index]
    body: list[Element] = [
        heading(_str(deck.get("title")) or topic_id),
        text(f"{index + 1}/{len(slides)} · {_str(slide.get('title'))}", weight="Bolder"),
    ]
    bullets = [_str(b) for b in slide.get("bullets") or [] if _str(b)]
    if bullets:
        body.append(text("\n".join(f"- {b}" for b in bullets)))
    if note := _str(slide.get("speaker_note")):
        body.append(text(truncate(note, 2000), subtle=True, size="Small"))
    nav = []
    if index > 0:
        nav.append(execute("◀ Vorige", VERB_SLIDE, {"topic": topic_id, "i": index - 1}))
    if index < len(slides) - 1:
        nav.append(execute("Volgende ▶", VERB_SLIDE, {"topic": topic_id, "i": index + 1}))
    if nav:
        body.append(action_set(nav))
    body.append(_other_formats(topic_id, "slides"))
    return card(body)


def infographic_card(info: dict[str, Any], *, topic_id: str, with_image: bool) -> Card:
    """The infographic's text parts (the image itself goes along as an inline attachment)."""
    body: list[Element] = [heading(_str(info.get("headline")) or topic_id)]
    if tagline := _str(info.get("tagline")):
        body.append(text(tagline))
    stats = [s for s in info.get("stats") or [] if isinstance(s, dict)][:10]
    if stats and not with_image:
        body.append(facts([(_str(s.get("value")), _str(s.get("label"))) for s in stats]))
    steps = [s for s in info.get("steps") or [] if isinstance(s, dict)]
    if steps and not with_image:
        body.append(text("\n".join(f"{i + 1}. {_str(s.get('text'))}" for i, s in enumerate(steps))))
    if with_image:
        body.append(text("De infographic staat hieronder.", subtle=True, size="Small"))
    body.append(_other_formats(topic_id, "infographic"))
    return card(body)


def infographic_image(info: dict[str, Any]) -> dict[str, Any] | None:
    """The stored PNG as an inline image attachment (None when absent, not a PNG or too big)."""
    image = info.get("image")
    data = image.get("base64") if isinstance(image, dict) else None
    if not isinstance(data, str) or len(data) > MAX_INLINE_PNG * 4 // 3 + 4:
        return None
    try:
        png = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    if not png.startswith(PNG_SIGNATURE):
        return None
    return {
        "contentType": "image/png",
        "contentUrl": f"data:image/png;base64,{data}",
        "name": "infographic.png",
    }


# -- quiz ---------------------------------------------------------------------------------


Question = QuestionView


def _question_body(q: Question) -> list[Element]:
    return [
        text(f"Vraag {q.index + 1}/{q.count}", weight="Bolder"),
        text(q.text),
        text("\n".join(f"**{LETTERS[i]}.** {truncate(o, 300)}" for i, o in enumerate(q.options))),
    ]


def question_card(q: Question, *, attempt_id: str) -> Card:
    """A question with one Action.Execute per option."""
    # The invoke carries only the button's data: the question rides along to show it again.
    shown = {
        "index": q.index,
        "count": q.count,
        "text": truncate(q.text, 1500),
        "options": [truncate(o, 300) for o in q.options],
    }
    buttons = [
        execute(
            f"{LETTERS[i]} · {truncate(o, 40)}",
            VERB_QUIZ_ANSWER,
            {"a": attempt_id, "q": q.index, "c": i, "qd": shown},
        )
        for i, o in enumerate(q.options)
    ]
    return card([*_question_body(q), action_set(buttons)])


def locked_card(q: Question, *, choice: int) -> Card:
    """The question after a click: no buttons (answer once), the verdict follows."""
    return card(
        [*_question_body(q), text(f"Je koos {LETTERS[choice]} — even kijken…", subtle=True)]
    )


def verdict_card(
    q: Question, *, choice: int | None, correct: bool, correct_index: int, explanation: str
) -> Card:
    """Right or wrong, the right answer and why."""
    body = _question_body(q)
    if correct:
        body.append(text("Goed!", weight="Bolder", color="Good"))
    else:
        chosen = (
            f" Je koos {LETTERS[choice]}." if choice is not None and choice < len(LETTERS) else ""
        )
        right = LETTERS[correct_index] if correct_index < len(LETTERS) else "?"
        body.append(
            text(
                f"Helaas.{chosen} Het juiste antwoord is {right}.",
                weight="Bolder",
                color="Attention",
            )
        )
    if explanation:
        body.append(text(explanation))
    return card(body)


def final_card(*, score: int, count: int, week: str) -> Card:
    """The score at the end, with the leaderboard one click away."""
    return card(
        [
            heading(f"Je hebt {score} van de {count} vragen goed"),
            text(f"Quiz van week {week}", subtle=True),
        ],
        actions=[execute("Ranglijst", VERB_LEADERBOARD, {})],
    )
