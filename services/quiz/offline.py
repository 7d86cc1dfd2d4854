"""Offline questions for `emit_quiz_questions`: Dutch, deterministic, gate-passing.

The correct answer is always the FIRST option, on purpose: it is the worst position bias a
model can have, and the service's shuffle must remove it (bench/bench_quiz_bias.py).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import dataclass

from services.quiz.gate import catch_all_option, fold, question_key
from services.quiz.models import MIN_EXPLANATION_CHARS, TOOL_NAME, Difficulty
from services.quiz.prompts import QuizPromptInput, parse_request
from shared.llm import OfflinePlans, OfflineRequest

# Four of every ten easy, four medium, two hard: the mix the weekly quiz asks for.
DIFFICULTY_CYCLE: tuple[Difficulty, ...] = (
    "easy", "medium", "easy", "medium", "hard", "easy", "medium", "easy", "medium", "hard",
)  # fmt: skip
TYPE_NL = {"concept": "Een concept", "role": "Een rol", "process": "Een proces"}
_TYPE_OPTIONS = ("Een rol", "Een proces", "Een concept", "Een externe partij")
_GENERIC_LABELS = (
    "Kantoorinrichting", "Parkeerbeleid", "Jaarrekening", "Klanttevredenheidsonderzoek",
    "Wagenparkbeheer", "Inkoopvoorwaarden",
)  # fmt: skip
_GENERIC_WORDS = (
    "leverancier", "kwartaalcijfers", "parkeerbeleid", "netwerkkabel", "vergaderruimte",
    "klantcontract", "begroting", "marketingplan",
)  # fmt: skip
_RELATION_QUESTIONS = {
    "depends_on": "Waar hangt '{label}' volgens het handboek van af?",
    "inverse:depends_on": "Welk onderwerp hangt volgens het handboek af van '{label}'?",
    "part_of": "Van welk geheel maakt '{label}' deel uit?",
    "inverse:part_of": "Wat is volgens het handboek een onderdeel van '{label}'?",
    "executed_by": "Wie voert '{label}' uit?",
    "inverse:executed_by": "Wat voert '{label}' volgens het handboek uit?",
}
_RELATED_QUESTION = "Met welk onderwerp hangt '{label}' samen? (verband {n})"
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD_RE = re.compile(r"[A-Za-zÀ-ÿ]{6,}")
MAX_OPTION = 200


@dataclass(frozen=True)
class _Draft:
    question: str
    correct: str
    distractors: tuple[str, ...]
    explanation: str


def _clip(text: str, limit: int = MAX_OPTION) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[: limit - 1].rsplit(" ", 1)[0] + "…"


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_RE.split(text) if len(s.split()) >= 4]


_NUMBER_RE = re.compile(r"(?<![\w.,])(\d+(?:[.,]\d+)?)(?![\w.,]*\d)")


def _masked(sentence: str, label: str) -> str:
    """The sentence with the topic's own name hidden (so it does not give the answer away)."""
    return re.sub(re.escape(label), "dit onderwerp", sentence, flags=re.IGNORECASE)


def _wrong_numbers(value: str) -> tuple[str, ...]:
    """Plausible wrong figures near a number from the text (26 → 13, 52, 20, 30)."""
    number = float(value.replace(",", "."))
    decimal = "," in value or "." in value

    def as_text(x: float) -> str:
        return f"{x:g}".replace(".", ",") if decimal else str(round(x))

    picks = [number / 2, number * 2, number - max(1, round(number / 4)), number + 4, number + 1]
    return tuple(dict.fromkeys(as_text(x) for x in picks if x > 0 and as_text(x) != value))


def _other_topics(req: QuizPromptInput) -> tuple[str, ...]:
    """Wrong answers that are real topics of the handbook; made-up ones only to fill up."""
    real = tuple(o for o in req.others if fold(o) != fold(req.label))
    return real if len(real) >= 3 else real + _GENERIC_LABELS


def _fact_drafts(req: QuizPromptInput, sentences: list[str]) -> Iterator[_Draft]:
    """Questions about what the topic's text says: its description, its figures."""
    label = req.label
    if sentences:
        yield _Draft(
            f"Wat beschrijft '{label}' het best?",
            _clip(sentences[0]).rstrip("."),
            (
                "Een externe leverancier die losstaat van Respellion",
                "Een marketingcampagne om nieuwe klanten te werven",
                "Een jaarlijks personeelsfeest zonder verdere afspraken",
                "Een technische norm voor netwerkapparatuur",
            ),
            f"Volgens het handboek: {_clip(sentences[0], 300)}",
        )
    # Distractors from other topics, the same kind first (the quiz service orders them so).
    for sentence in sentences[1:2]:
        yield _Draft(
            f'Over welk onderwerp gaat dit: "{_clip(_masked(sentence, label), 300)}"?',
            label,
            _other_topics(req),
            f"Het handboek zegt dit over '{label}': {_clip(sentence, 300)}",
        )
    for sentence in sentences:
        match = _NUMBER_RE.search(sentence)
        if match is None:
            continue
        gap = _clip(sentence[: match.start()] + "___" + sentence[match.end() :], 300)
        yield _Draft(
            f"Welk getal hoort op de plek van ___ over '{label}': \"{gap}\"?",
            match[1],
            _wrong_numbers(match[1]),
            f"Het handboek zegt: {_clip(sentence, 300)}",
        )
        break


def _drafts(req: QuizPromptInput) -> Iterator[_Draft]:
    label = req.label
    kind = TYPE_NL.get(req.type, "Een concept")
    sentences = _sentences(req.description)
    basis = f"Volgens het handboek: {_clip(sentences[0], 300)}" if sentences else ""
    yield from _fact_drafts(req, sentences)
    others = _other_topics(req)
    for n, rel in enumerate(req.related, start=1):
        template = _RELATION_QUESTIONS.get(rel["relation"], _RELATED_QUESTION)
        yield _Draft(
            template.format(label=label, n=n),
            rel["label"],
            others,
            f"In het kennisnetwerk is '{label}' verbonden met '{rel['label']}' "
            f"({rel['relation'].replace('inverse:', '').replace('_', ' ')}).",
        )
    # One fill-in-the-blank at most, its wrong words from other sentences and topics: a word
    # from the same sentence would sit right next to the gap.
    for n, sentence in enumerate(sentences, start=1):
        candidates = [w for w in _WORD_RE.findall(sentence) if fold(w) not in fold(label)]
        if not candidates:
            continue
        word = max(candidates, key=len)
        own = {fold(w) for w in _WORD_RE.findall(sentence)}
        elsewhere = [w for s in sentences if s != sentence for w in _WORD_RE.findall(s)]
        elsewhere += [w for o in req.others for w in _WORD_RE.findall(o)] + list(_GENERIC_WORDS)
        gap = _clip(sentence.replace(word, "_____", 1), 300)
        yield _Draft(
            f"Welk woord ontbreekt in zin {n} over '{label}': \"{gap}\"?",
            word,
            tuple(w for w in elsewhere if fold(w) not in own),
            f"De volledige zin in het handboek luidt: {_clip(sentence, 300)}",
        )
        break
    yield _Draft(
        f"Wat voor onderwerp is '{label}' in het kennisnetwerk van Respellion?",
        kind,
        tuple(o for o in _TYPE_OPTIONS if o != kind),
        f"'{label}' staat in het kennisnetwerk als {kind.lower()}. {basis}".strip(),
    )
    yield _Draft(
        f"Waar vind je bij Respellion de afspraken over '{label}'?",
        "In het handboek, voor iedereen in te zien",
        (
            "Alleen in de mailbox van de directie",
            "Nergens: daar zijn geen afspraken over",
            "In een privédocument van één collega",
        ),
        f"Respellion werkt radicaal transparant: afspraken over '{label}' staan in het handboek.",
    )
    yield _Draft(
        f"Wat past bij radicale transparantie rond '{label}'?",
        f"Iedereen kan nalezen hoe '{_clip(label, 80)}' werkt",
        (
            f"Alleen managers mogen weten hoe '{_clip(label, 80)}' werkt",
            f"Informatie over '{_clip(label, 80)}' blijft geheim",
            f"Over '{_clip(label, 80)}' wordt niet gesproken",
        ),
        "Radicale transparantie betekent dat kennis en afspraken voor iedereen open zijn.",
    )


def _options(draft: _Draft, rng: random.Random) -> list[str] | None:
    correct = _clip(draft.correct)
    if catch_all_option(correct):
        return None
    pool = list(dict.fromkeys(_clip(d) for d in draft.distractors))
    rng.shuffle(pool)  # which wrong answers appear varies; the correct one stays first
    options, seen = [correct], {fold(correct)}
    for option in pool:
        if fold(option) not in seen and not catch_all_option(option):
            options.append(option)
            seen.add(fold(option))
        if len(options) == 4:
            return options
    return None


def offline_questions(req: QuizPromptInput, *, seed: int = 0) -> list[dict[str, object]]:
    """Up to `req.count` questions for the request, new ones (not in `avoid`) first."""
    rng = random.Random(seed)
    avoid = {question_key(text) for text in req.avoid}
    built: list[dict[str, object]] = []
    seen: set[str] = set()
    for draft in _drafts(req):
        key = question_key(draft.question)
        options = _options(draft, rng)
        if options is None or not key or key in seen:
            continue
        seen.add(key)
        explanation = draft.explanation
        if len(explanation) < MIN_EXPLANATION_CHARS:
            explanation = f"{explanation} Zie het onderwerp '{req.label}' in het handboek."
        built.append(
            {"question": draft.question[:500], "options": options, "correct_index": 0,
             "explanation": explanation[:1000], "_new": key not in avoid}
        )  # fmt: skip
    # Like a model that has run out of ideas: with nothing new it repeats itself (dedup drops it).
    chosen = [q for q in built if q["_new"]] or built
    chosen = chosen[: max(1, req.count)]
    for i, question in enumerate(chosen):
        question.pop("_new")
        question["difficulty"] = DIFFICULTY_CYCLE[i % len(DIFFICULTY_CYCLE)]
    return chosen


def _handle(request: OfflineRequest) -> dict[str, object] | None:
    parsed = parse_request(request.user)
    if parsed is None:
        return None  # not our prompt: the schema filler answers
    return {"questions": offline_questions(parsed, seed=request.seed)}


def offline_plans() -> OfflinePlans:
    """The offline provider's `emit_quiz_questions`: real questions from the prompt's facts."""
    return OfflinePlans(tools={TOOL_NAME: _handle})
