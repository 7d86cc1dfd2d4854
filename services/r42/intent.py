"""Natural requests to add something to the knowledge graph, read without a language model.

"Kun je een onderwerp toevoegen over thuiswerken?", "Voeg een proces X toe", "Voeg toe dat
de fietsvergoeding 23 cent per kilometer is", "Can you add a topic about X?": each names
what to add (a label, a kind) and maybe what it is. The offline "model" turns a request into
a propose_graph_delta call, so a newcomer without an API key sees the proposal flow too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_QUOTES = "'\"“”‘’`"
KINDS = {
    "onderwerp": "concept", "begrip": "concept", "concept": "concept", "topic": "concept",
    "rol": "role", "functie": "role", "role": "role",
    "proces": "process", "werkwijze": "process", "procedure": "process", "process": "process",
}  # fmt: skip
DUTCH_KIND = {"concept": "begrip", "role": "rol", "process": "proces"}
_KIND = "|".join(KINDS)
_NAME = r"(?P<name>[^,.;:!?\n]{1,80}?)"
_END = r"\s*(?:[.!?\n]|$)"
_POLITE_NL = r"(?:(?:kun|kan|wil|zou|mag)\s+(?:je|jij|u)\s+(?:ook\s+)?(?:alsjeblieft\s+)?)"
_ARTICLE = r"(?:(?:een|het|de|a|an|the)\s+)?"
_VERB_NL = r"(?:toevoegen|opnemen|aanmaken|maken)"
_ABOUT = r"(?:over|voor|met de naam|genaamd|about|on|for|called|named)"
_START_EN = r"(?:\b(?:can|could|would|will)\s+you\s+(?:please\s+)?|\bplease\s+|^\s*)"
_TOPIC_PATTERNS = (
    # "kun je een onderwerp toevoegen over X"
    re.compile(
        rf"\b{_POLITE_NL}{_ARTICLE}(?:nieuw\s+)?(?P<kind>{_KIND})\s+{_VERB_NL}\s+{_ABOUT}\s+"
        rf"{_NAME}{_END}",
        re.IGNORECASE,
    ),
    # "kun je een onderwerp over X toevoegen"
    re.compile(
        rf"\b{_POLITE_NL}{_ARTICLE}(?:nieuw\s+)?(?P<kind>{_KIND})\s+{_ABOUT}\s+{_NAME}"
        rf"\s+{_VERB_NL}{_END}",
        re.IGNORECASE,
    ),
    # "voeg een onderwerp (toe) over X (toe)", "voeg het proces X toe"
    re.compile(
        rf"\bvoeg\s+{_ARTICLE}(?:nieuw\s+)?(?P<kind>{_KIND})\s+(?:toe\s+)?"
        rf"(?:{_ABOUT}\s+)?{_NAME}(?:\s+toe)?{_END}",
        re.IGNORECASE,
    ),
    # "can you add a topic about X", "please add a role called X", "Add a process for X."
    re.compile(
        rf"{_START_EN}add\s+{_ARTICLE}(?:new\s+)?(?P<kind>{_KIND})\s+(?:{_ABOUT}\s+)?{_NAME}"
        rf"(?:\s+to\s+the\s+(?:knowledge\s+graph|kb))?{_END}",
        re.IGNORECASE | re.MULTILINE,
    ),
)
# "voeg toe dat …", "kun je toevoegen dat …", "add that …"
_FACT_RE = re.compile(
    rf"(?:\bvoeg\s+(?:ook\s+)?toe|\b{_POLITE_NL}{_VERB_NL}|{_START_EN}(?P<add>add))\s+"
    r"(?:aan\s+de\s+kennisgraaf\s+)?(?:dat|that)\s+(?P<fact>[^!?\n]{3,400}?)\s*(?:[.!?\n]|$)",
    re.IGNORECASE | re.MULTILINE,
)
# Words that end a fact's subject ("de fietsvergoeding | is 23 cent …"): articles and
# prepositions start a new phrase, verbs and numbers are no longer the subject.
_SUBJECT_STOP = frozenset(
    "is zijn was wordt worden werd heeft hebben had mag mogen moet moeten kan kunnen krijgt "
    "krijgen gaat gaan valt vallen staat staan geldt gelden begint duurt komt doet betaalt "
    "op in aan van voor met bij na tot over per om uit naar door onder sinds tijdens "
    "de het een elke iedere alle geen niet ook altijd nu al "
    "are was were has have can may must will gets does on at of for with by to from".split()
)
_FINITE_VERBS = frozenset(
    "is zijn wordt worden heeft hebben mag mogen moet moeten kan kunnen krijgt krijgen "
    "gaat gaan valt vallen staat staan geldt gelden begint duurt komt betaalt".split()
)
_PRONOUNS = frozenset("iedereen we wij je jij ik men everyone everybody we you i".split())
_SUBJECT_START = frozenset("de het een the a an onze ons our elke iedere each every".split())


@dataclass(frozen=True)
class TopicRequest:
    """What a natural request asks to add: a label, its type and what is known about it."""

    label: str
    type: str
    description: str
    wording: str


def _clean(text: str) -> str:
    return " ".join(text.strip(_QUOTES + " ").split()).rstrip(_QUOTES + " ")


def _sentence(text: str) -> str:
    text = _clean(text)
    return (text[:1].upper() + text[1:]).rstrip(".") + "." if text else ""


def _rest(message: str, end: int) -> str:
    """What the message says after the request itself ("… over X? Het is …")."""
    return _clean(message[end:].lstrip(" ?!.:\n"))


def _subject_words(fact: str, *, english: bool) -> tuple[list[str], list[str]]:
    """The fact's subject words and the words after them."""
    words = _clean(fact).split()
    while words and words[0].lower() in _SUBJECT_START:
        words = words[1:]
    if words and words[0].lower() in _PRONOUNS:  # "iedereen krijgt een laptop": the laptop
        nouns = [i for i, w in enumerate(words[1:-1], 1) if w.lower() in _SUBJECT_START]
        head = words[: nouns[0] + 1] if nouns else words
        subject = [w for w in words[len(head) :][:1] if w.lower() not in _SUBJECT_STOP]
        if subject:
            return subject, words[len(head) + 1 :]
    subject = []
    for word in words[:4]:
        bare = word.strip(_QUOTES + ",;:()")
        lower = bare.lower()
        # English verbs after the subject end in -s ("the office closes …").
        verb = lower in _SUBJECT_STOP or (english and subject and lower.endswith("s"))
        if not bare or verb or any(c.isdigit() for c in bare):
            break
        subject.append(bare)
    return subject, words[len(subject) :]


def fact_subject(fact: str, *, english: bool = False) -> str:
    """The subject of a stated fact: "de fietsvergoeding 23 cent per km is" → fietsvergoeding."""
    return " ".join(_subject_words(fact, english=english)[0])


def fact_sentence(fact: str) -> str:
    """A Dutch "dat"-clause as a main clause: "het kantoor op vrijdag dicht is" → "Het kantoor
    is op vrijdag dicht." (the verb moves from the end to after the subject)."""
    words = _clean(fact).rstrip(".").split()
    if words and words[0].lower() in _PRONOUNS:
        cut = 1
    else:
        subject, rest = _subject_words(fact, english=False)
        cut = len(words) - len(rest) if subject else 0
    if 0 < cut < len(words) - 1 and words[-1].lower() in _FINITE_VERBS:
        words = [*words[:cut], words[-1], *words[cut:-1]]
    return _sentence(" ".join(words))


def topic_request(message: str) -> TopicRequest | None:
    """The topic a natural request asks to add, or None when the message asks no such thing."""
    for pattern in _TOPIC_PATTERNS:
        match = pattern.search(message)
        if match is None:
            continue
        name = _clean(match["name"])
        first, _, others = name.partition(" ")
        if others and first.lower() in _SUBJECT_START:  # "over de fietsregeling"
            name = others
        if not name or name.lower() in _SUBJECT_STOP:
            continue
        kind = KINDS[match["kind"].lower()]
        label = name[:1].upper() + name[1:]
        return TopicRequest(
            label=label, type=kind, description=_sentence(_rest(message, match.end())),
            wording=match["kind"].lower(),
        )  # fmt: skip
    match = _FACT_RE.search(message)
    if match is None:
        return None
    english = match["add"] is not None
    subject = fact_subject(match["fact"], english=english)
    if not subject:
        return None
    described = _sentence(match["fact"]) if english else fact_sentence(match["fact"])
    return TopicRequest(
        label=subject[:1].upper() + subject[1:], type="concept", description=described,
        wording="feit",
    )  # fmt: skip


__all__ = ["DUTCH_KIND", "KINDS", "TopicRequest", "fact_subject", "topic_request"]
