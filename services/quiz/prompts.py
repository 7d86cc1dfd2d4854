"""Prompts of the quiz generator; PROMPT_VERSION is stored on every generated question."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from services.quiz.models import MIN_EXPLANATION_CHARS, OPTION_COUNT, TOOL_NAME
from shared.llm.caching import cached_system

PROMPT_VERSION = "quiz-v1"

REQUEST_TAG = "quiz_request"
_REQUEST_RE = re.compile(rf"<{REQUEST_TAG}>\s*(\{{.*\}})\s*</{REQUEST_TAG}>", re.DOTALL)
MAX_AVOID = 40
MAX_DESCRIPTION_CHARS = 4000

SYSTEM_TEXT = f"""Je schrijft meerkeuzevragen voor de wekelijkse quiz van Respellion, een Nederlands
IT-bedrijf. Vragen toetsen begrip van het bedrijfshandboek, niet van trivia.

Regels voor elke vraag:
- Nederlands, één duidelijke vraag, alleen gebaseerd op de aangeleverde informatie.
- Precies {OPTION_COUNT} verschillende antwoordopties; precies één is juist.
- Nooit "alle bovenstaande", "geen van bovenstaande", "beide", "all of the above",
  "none of the above" of "both A and B": opties worden geschud.
- Foute opties zijn plausibel en ongeveer even lang als het juiste antwoord.
- Een uitleg van minstens {MIN_EXPLANATION_CHARS} tekens die zegt waarom het juiste antwoord klopt.
- Een moeilijkheid: easy (feit uit de beschrijving), medium (toepassen of verbanden),
  hard (afwegen, uitzonderingen, samenhang met andere onderwerpen).
- Geen vraag die al in "avoid" staat of er sterk op lijkt.

Lever de vragen uitsluitend aan via de tool {TOOL_NAME}."""
# Marked for the prompt cache (kept by shared.llm only where tools + system reach the minimum).
SYSTEM = cached_system(SYSTEM_TEXT)


@dataclass(frozen=True)
class QuizPromptInput:
    """What a generation request says about the topic (also read by the offline handler)."""

    topic_id: str
    label: str
    type: str
    description: str
    count: int
    related: list[dict[str, str]] = field(default_factory=list)
    others: list[str] = field(default_factory=list)
    avoid: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The JSON object embedded in the user message."""
        return {
            "topic_id": self.topic_id,
            "label": self.label,
            "type": self.type,
            "description": self.description[:MAX_DESCRIPTION_CHARS],
            "count": self.count,
            "related": self.related,
            "other_topics": self.others,
            "avoid": self.avoid[-MAX_AVOID:],
        }


def user_message(request: QuizPromptInput) -> str:
    """The user turn: the instruction and the request as a tagged JSON block."""
    payload = json.dumps(request.to_json(), ensure_ascii=False, indent=1)
    return (
        f"Schrijf {request.count} nieuwe meerkeuzevragen over het onderwerp "
        f"{request.label!r}. Mix de moeilijkheid: ongeveer 40% easy, 40% medium, 20% hard. "
        f"Gebruik 'related' en 'other_topics' voor verbanden en plausibele foute opties.\n\n"
        f"<{REQUEST_TAG}>\n{payload}\n</{REQUEST_TAG}>"
    )


def parse_request(text: str) -> QuizPromptInput | None:
    """The request embedded in a user message (None when there is none or it is malformed)."""
    match = _REQUEST_RE.search(text)
    if match is None:
        return None
    try:
        data = json.loads(match.group(1))
        return QuizPromptInput(
            topic_id=str(data["topic_id"]),
            label=str(data["label"]),
            type=str(data.get("type", "concept")),
            description=str(data.get("description", "")),
            count=int(data["count"]),
            related=[
                {"label": str(r.get("label", "")), "relation": str(r.get("relation", ""))}
                for r in data.get("related", [])
                if isinstance(r, dict)
            ],
            others=[str(o) for o in data.get("other_topics", [])],
            avoid=[str(a) for a in data.get("avoid", [])],
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
