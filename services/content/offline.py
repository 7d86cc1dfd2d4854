"""Offline handlers: deterministic, valid Dutch content from the topic in the request.

Used when no API key is set (`make up`, CI, evals). Everything is derived from the
topic's label and description carried in the prompt, so the same topic always gives
the same content, and every artifact is marked `offline` in its meta by the caller.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from services.content.models import (
    MAX_HEADLINE_WORDS,
    MAX_TAGLINE_WORDS,
    PALETTE,
    Article,
    ArticleSection,
    CustomTopic,
    Infographic,
    LearningBundle,
    Slide,
    SlideDeck,
    Stat,
    Step,
)
from services.content.patches import PATCH_TOOLS
from services.content.prompts import (
    ALL_TOOL,
    ARTICLE_TOOL,
    CUSTOM_TOPIC_TOOL,
    INFOGRAPHIC_TOOL,
    SLIDES_TOOL,
)
from shared.llm import OfflinePlans, OfflineRequest, extract_json
from shared.llm.providers.offline import split_sentences

_WHY = {
    "concept": "Een gedeeld begrip van {label} voorkomt misverstanden tussen teams.",
    "role": "Weten wat {label} doet, helpt je de juiste persoon op het juiste moment te vinden.",
    "process": "Als iedereen {label} op dezelfde manier volgt, loopt het werk soepeler.",
}
_TYPE_NL = {"concept": "begrip", "role": "rol", "process": "proces"}
_REQUEST_PREFIX = re.compile(
    r"^(ik\s+wil\s+(graag\s+)?(meer\s+)?(leren|weten)\s+over|leer\s+me(\s+meer)?\s+over|"
    r"i\s+want\s+to\s+learn\s+about|teach\s+me\s+about|wat\s+is|what\s+is)\s+",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w")
_DELIMITED = re.compile(r"<<<\n(.*?)\n>>>", re.DOTALL)


def _sentence(text: str) -> str:
    text = " ".join(text.split()).strip()
    return text if text[-1:] in ".!?…" else f"{text}."


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _words(text: str, limit: int) -> str:
    return " ".join(text.split()[:limit])


def _topic(req: OfflineRequest) -> dict[str, str]:
    data = extract_json(req.user)
    label = _clip(" ".join(str(data.get("label") or data.get("id") or "dit onderwerp").split()), 80)
    return {
        "id": str(data.get("id") or label),
        "label": label,
        "type": str(data.get("type") or "concept"),
        "description": str(data.get("description") or ""),
    }


def _facts(topic: dict[str, str]) -> list[str]:
    """The sentences of the topic's own text (a generic line only when it has none)."""
    found = [_sentence(s) for s in split_sentences(topic["description"]) if _WORD.search(s)]
    fallback = [
        f"{topic['label']} is een onderwerp uit het handboek van Respellion.",
        "Je komt het tegen in je dagelijkse werk.",
    ]
    return (found + fallback)[: max(2, len(found))]


_NUMBER = re.compile(
    r"(?<![\w,.])(\d+(?:[.,]\d+)?)\s*(%|procent|euro|cent|dagen|dag|weken|week|"
    r"maanden|maand|jaar|uur|keer|minuten|km|kilometer)?\b",
    re.IGNORECASE,
)
_NUMBER_WORDS = {
    "twee": "2", "drie": "3", "vier": "4", "vijf": "5", "zes": "6", "zeven": "7",
    "acht": "8", "negen": "9", "tien": "10", "twaalf": "12", "dertig": "30",
}  # fmt: skip
_NUMBER_WORD = re.compile(
    rf"\b({'|'.join(_NUMBER_WORDS)})\s+(dagen|weken|maanden|jaar|uur|keer|collega's)\b",
    re.IGNORECASE,
)


def _figures(facts: list[str]) -> list[Stat]:
    """Figures the text itself states: "26 keer" + what follows it ("je wekelijkse arbeidsduur")."""
    stats: list[Stat] = []
    for fact in facts:
        for match in [*_NUMBER.finditer(fact), *_NUMBER_WORD.finditer(fact)]:
            number = _NUMBER_WORDS.get(match[1].lower(), match[1])
            unit = (match[2] or "").lower()
            value = f"{number}{'%' if unit in ('%', 'procent') else f' {unit}' if unit else ''}"
            after = re.split(r"[;,:]", fact[match.end() :])[0].strip(" .").split()
            before = re.split(r"[;,:]", fact[: match.start()])[-1].strip(" .").split()
            label = " ".join(after[:8] if len(after) >= 2 else before[-6:])
            if label and len(value) <= 16 and all(s.value != value for s in stats):
                stats.append(Stat(value=value, label=_clip(label, 80)))
    return stats[:6]


def _takeaways(label: str, facts: list[str]) -> list[str]:
    taken = [_clip(f, 160) for f in facts[:3]]
    if len(taken) < 3:
        taken.append(
            f"Vraag het R42 of een collega als iets over {_clip(label, 80)} niet duidelijk is."
        )
    if len(taken) < 3:
        taken.append("Alles over dit onderwerp staat open in het handboek.")
    return taken


def article(topic: dict[str, str]) -> Article:
    """A three-section article built from the topic's own sentences, each said once."""
    label, facts = topic["label"], _facts(topic)
    why = _WHY.get(topic["type"], _WHY["concept"]).format(label=label)
    what, rest = facts[1:3], facts[3:]
    return Article(
        title=f"{label} in vijf minuten",
        intro=f"Deze week staat {label} centraal. {facts[0]}",
        sections=[
            ArticleSection(heading=f"Wat is {label}?", body=" ".join(
                [*what, f"Dat is de kern van {label}.",
                 "In deze micro-learning lees je de rest in een paar minuten."]
            )),
            ArticleSection(heading="Waarom het ertoe doet", body=" ".join([
                why,
                "Bij Respellion werken we radicaal transparant, dus deze kennis is voor "
                "iedereen beschikbaar.",
                "Zo kun je zelf goede beslissingen nemen zonder op anderen te wachten.",
            ])),
            ArticleSection(heading="Zo pak je het aan", body=" ".join(
                [*rest, f"Lees wat het handboek over {label} zegt.",
                 "Bespreek met een collega hoe jullie er in je team mee omgaan.",
                 "Noteer één ding dat je deze week anders gaat doen."]
            )),
        ],
        key_takeaways=_takeaways(label, facts),
    )  # fmt: skip


_NOTES = (
    "Vertel in je eigen woorden wat {label} is, en vraag wie het al eens tegenkwam.",
    "Vraag de groep waar {label} in hun werk het verschil maakt.",
    "Laat iemand een voorbeeld uit de eigen praktijk geven.",
)


def slides(topic: dict[str, str]) -> SlideDeck:
    """A four-slide deck following the article; the notes coach, they do not repeat."""
    text = article(topic)
    deck = [
        Slide(title=section.heading,
              bullets=[_clip(s, 160) for s in split_sentences(section.body)[:3]],
              speaker_note=_NOTES[i % len(_NOTES)].format(label=topic["label"]))
        for i, section in enumerate(text.sections)
    ]  # fmt: skip
    deck.append(
        Slide(title="Kernpunten", bullets=text.key_takeaways,
              speaker_note=f"Sluit af met de kernpunten over {topic['label']} en vraag wat "
                           "iedereen deze week gaat toepassen.")
    )  # fmt: skip
    return SlideDeck(title=_clip(topic["label"], 160), slides=deck)


def infographic(topic: dict[str, str]) -> Infographic:
    """An infographic with the figures the topic's text states and its sentences as steps."""
    label, facts = topic["label"], _facts(topic)
    themes = sorted(PALETTE)
    pick = int(hashlib.sha256(topic["id"].encode()).hexdigest(), 16) % len(themes)
    stats = _figures(facts)
    if len(stats) < 3:  # what the text offers otherwise: how much it says
        words = len(topic["description"].split())
        extra = [Stat(value=str(len(facts)), label="kernzinnen in het handboek"),
                 Stat(value=f"{max(1, round(words / 200))} min", label="leestijd"),
                 Stat(value=topic["type"] and _TYPE_NL.get(topic["type"], "begrip"),
                      label="soort onderwerp")]  # fmt: skip
        stats += extra[: 3 - len(stats)]
    steps = [_clip(f, 200) for f in facts[1:4]] or []
    steps += [f"Lees wat het handboek over {_clip(label, 120)} zegt.",
              "Bespreek het met een collega.", "Pas deze week één ding toe."]  # fmt: skip
    return Infographic(
        headline=_words(f"{label} in één oogopslag", MAX_HEADLINE_WORDS),
        tagline=_words(f"Wat je deze week moet weten over {label}", MAX_TAGLINE_WORDS),
        stats=stats,
        steps=[Step(number=n, text=t) for n, t in enumerate(steps[:3], start=1)],
        quote=_clip(facts[0], 300),
        theme=themes[pick],
    )


def custom_topic(request_text: str) -> CustomTopic:
    """A topic label and description from a free-text learning request."""
    text = " ".join(request_text.split())
    text = _REQUEST_PREFIX.sub("", text).strip(" ?!.") or text or "Nieuw onderwerp"
    label = _clip(_words(text, 8), 80)
    label = label[:1].upper() + label[1:]
    return CustomTopic(
        label=label,
        description=(
            f"{label} is een onderwerp waar een collega meer over wil weten. Deze "
            "micro-learning geeft een eerste overzicht. De inhoud is offline gemaakt, "
            "zonder taalmodel."
        ),
    )


def _set_intro(req: OfflineRequest) -> dict[str, Any]:
    current = extract_json(req.user)
    asked = _DELIMITED.search(req.user)
    instruction = _clip(" ".join((asked.group(1) if asked else "").split()), 200)
    intro = str(current.get("intro") or "").strip()
    note = f"[offline: de instructie '{instruction}' is genoteerd; zonder taalmodel is de tekst "
    return {"intro": f"{intro} {note}niet herschreven.]".strip()}


def _custom(req: OfflineRequest) -> CustomTopic:
    asked = _DELIMITED.search(req.user)
    return custom_topic(asked.group(1) if asked else req.user)


def offline_plans() -> OfflinePlans:
    """The offline provider's stand-ins for every content tool."""

    def bundle(r: OfflineRequest) -> LearningBundle:
        topic = _topic(r)
        return LearningBundle(
            article=article(topic), slides=slides(topic), infographic=infographic(topic)
        )

    return OfflinePlans(
        tools={
            ARTICLE_TOOL.name: lambda r: article(_topic(r)),
            SLIDES_TOOL.name: lambda r: slides(_topic(r)),
            INFOGRAPHIC_TOOL.name: lambda r: infographic(_topic(r)),
            ALL_TOOL.name: bundle,
            CUSTOM_TOPIC_TOOL.name: _custom,
            PATCH_TOOLS[0].name: _set_intro,
        }
    )
