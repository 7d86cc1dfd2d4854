"""Prompts and tools of the content service; PROMPT_VERSION is stored on every artifact.

Versions are `content-v<N>`: content made with a lower N than the running one is stale.
A higher N (a newer replica during a rolling update) is not, so replicas never fight.
"""

from __future__ import annotations

import json
import re
from typing import Any

from services.content.models import (
    MAX_HEADLINE_WORDS,
    MAX_TAGLINE_WORDS,
    MIN_SECTIONS,
    MIN_SENTENCES,
    MIN_SLIDES,
    MIN_STATS,
    MIN_STEPS,
    MIN_TAKEAWAYS,
    PALETTE,
    Article,
    CustomTopic,
    Infographic,
    LearningBundle,
    SlideDeck,
)
from shared.llm import Tool
from shared.llm.caching import cached_system

PROMPT_VERSION = "content-v1"
"""Version of the generation prompts; bump it when they change to mark content stale."""
REFINE_PROMPT_VERSION = "content-refine-v1"
CUSTOM_TOPIC_PROMPT_VERSION = "content-custom-v1"

_VERSION_RE = re.compile(r"-v(\d+)$")

ARTICLE_TOOL = Tool(
    "emit_learning_article",
    f"Emit the micro-learning article: title, intro, at least {MIN_SECTIONS} sections of at "
    f"least {MIN_SENTENCES} sentences each, at least {MIN_TAKEAWAYS} key takeaways.",
    Article,
)
SLIDES_TOOL = Tool(
    "emit_learning_slides",
    f"Emit a slide deck of at least {MIN_SLIDES} slides, each with a title, bullets and a "
    "speaker note.",
    SlideDeck,
)
INFOGRAPHIC_TOOL = Tool(
    "emit_learning_infographic",
    f"Emit an infographic: headline (at most {MAX_HEADLINE_WORDS} words), tagline (at most "
    f"{MAX_TAGLINE_WORDS} words), at least {MIN_STATS} stats, at least {MIN_STEPS} steps "
    f"numbered from 1, a quote and one theme of: {', '.join(PALETTE)}.",
    Infographic,
)
ALL_TOOL = Tool(
    "emit_learning_all",
    "Emit the article, the slide deck and the infographic of the topic in one call.",
    LearningBundle,
)
CUSTOM_TOPIC_TOOL = Tool(
    "emit_custom_topic",
    "Emit the requested learning topic as a short, polished label with a description.",
    CustomTopic,
)
TOOL_FOR_KIND: dict[str, Tool] = {
    "article": ARTICLE_TOOL,
    "slides": SLIDES_TOOL,
    "infographic": INFOGRAPHIC_TOOL,
    "all": ALL_TOOL,
}

SYSTEM_TEXT = (
    "Je schrijft korte, wekelijkse micro-learning voor medewerkers van Respellion, een "
    "Nederlands IT-bedrijf dat draait op radicale transparantie. Schrijf in helder, "
    "vriendelijk Nederlands (je-vorm), concreet en praktisch. Gebruik alleen wat over het "
    "onderwerp is gegeven en algemeen bekende kennis; verzin geen bedrijfsfeiten, cijfers "
    "of namen. Cijfers op een infographic zijn eenvoudige, controleerbare getallen (zoals "
    "het aantal stappen of minuten). Roep precies de gevraagde tool aan."
)
# Marked for the prompt cache (kept by shared.llm only where tools + system reach the minimum).
SYSTEM = cached_system(SYSTEM_TEXT)
CUSTOM_TOPIC_SYSTEM = (
    "Een medewerker wil iets leren. Maak van de vraag een kort, net leeronderwerp: een label "
    "van hooguit een paar woorden (zonder 'ik wil leren over'), een beschrijving van twee of "
    "drie zinnen in het Nederlands, het type (concept, role of process). Laat "
    "learning_relevance weg tenzij het duidelijk kern- of randkennis is."
)
REFINE_SYSTEM = (
    "Je verbetert een bestaand micro-learning artikel met kleine patch-operaties, nooit met "
    "een herschrijving. Gebruik set_intro, set_section (op kop), add_section (start of "
    "end), remove_section en replace_takeaways. Je mag meerdere tools in één antwoord "
    "aanroepen; ze worden op volgorde toegepast. Het resultaat houdt minstens "
    f"{MIN_SECTIONS} secties van minstens {MIN_SENTENCES} zinnen en minstens "
    f"{MIN_TAKEAWAYS} kernpunten. Schrijf in het Nederlands."
)

_KIND_ASK = {
    "article": "Schrijf het artikel.",
    "slides": "Maak de slides.",
    "infographic": "Maak de infographic.",
    "all": "Maak het artikel, de slides en de infographic.",
}


def topic_payload(*, topic_id: str, label: str, description: str, type: str) -> dict[str, str]:
    """The topic as the prompts carry it (offline handlers read it back from the message)."""
    return {"id": topic_id, "label": label, "type": type, "description": description}


def generation_message(topic: dict[str, str], kind: str) -> str:
    """The user turn asking for one content kind about a topic."""
    return (
        f"Onderwerp:\n```json\n{json.dumps(topic, ensure_ascii=False, indent=2)}\n```\n"
        f"{_KIND_ASK[kind]}"
    )


def custom_topic_message(request_text: str) -> str:
    """The user turn asking to polish a free-text learning request."""
    return f"Leervraag van een medewerker:\n<<<\n{request_text}\n>>>"


def refine_message(article: dict[str, Any], instruction: str) -> str:
    """The user turn with the current article and the admin's instruction."""
    return (
        f"Huidig artikel:\n```json\n{json.dumps(article, ensure_ascii=False, indent=2)}\n```\n"
        f"Instructie van de beheerder:\n<<<\n{instruction}\n>>>"
    )


def version_number(version: str | None) -> int | None:
    """N of `…-vN`, or None when the version is missing or in another format."""
    if not version:
        return None
    match = _VERSION_RE.search(version)
    return int(match.group(1)) if match else None


def is_older(version: str | None, current: str = PROMPT_VERSION) -> bool:
    """Whether content made with `version` predates `current` (unknown formats count as older)."""
    mine, now = version_number(version), version_number(current)
    if now is None:
        return version != current
    return mine is None or mine < now
