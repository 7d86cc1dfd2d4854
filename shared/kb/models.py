"""Knowledge-base vocabularies, input protocols, plain topic/relation records and ids."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol, TypeGuard, runtime_checkable

from shared.errors import BadInputError

TopicType = Literal["concept", "role", "process"]
RelationType = Literal["related_to", "depends_on", "part_of", "executed_by"]
Relevance = Literal["core", "standard", "peripheral", "exclude"]

TOPIC_TYPES: tuple[str, ...] = ("concept", "role", "process")
RELATION_TYPES: tuple[str, ...] = ("related_to", "depends_on", "part_of", "executed_by")
RELEVANCE_LEVELS: tuple[str, ...] = ("core", "standard", "peripheral", "exclude")
# `executes` came from older extraction prompts: "A executes B" is "B executed_by A".
LEGACY_RELATION_TYPES: dict[str, RelationType] = {"executes": "executed_by"}

KEBAB_ID_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_ID_CHARS = 120

# Letters NFKD does not decompose into ASCII; without these "Straße" would become "strae".
_FOLD_EXTRA = str.maketrans(
    dict(zip("ßæÆøØœŒłŁđĐıþð", "ss ae AE o O oe OE l L d D i th d".split(), strict=True))
)
_NON_ALNUM_RE = re.compile(r"[^a-z0-9]+")


class KbInputError(BadInputError, ValueError):
    """Bad input to a knowledge-base function; also a ValueError for plain callers."""


@runtime_checkable
class TopicLike(Protocol):
    """What the KB logic reads from a topic (the store's Topic has these attributes)."""

    # Read-only members: a frozen model with narrower (Literal) field types still matches.
    @property
    def id(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def learning_relevance(self) -> str: ...


@runtime_checkable
class RelationLike(Protocol):
    """What the KB logic reads from a relation (the store's Relation has these attributes)."""

    @property
    def source(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def description(self) -> str | None: ...


@dataclass(frozen=True, slots=True)
class KbTopic:
    """A plain, immutable topic record (tests, markdown import, merge plans)."""

    id: str
    label: str
    type: str = "concept"
    description: str = ""
    learning_relevance: str = "standard"
    relevance_locked: bool = False
    source: str = ""


@dataclass(frozen=True, slots=True)
class KbRelation:
    """A plain, immutable typed relation between two topic ids."""

    source: str
    target: str
    type: str = "related_to"
    description: str = ""


def fold_text(text: str) -> str:
    """Lowercase and strip accents ("Één Cafés" → "een cafes"); keeps punctuation."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text.translate(_FOLD_EXTRA))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()


class Labelled(Protocol):
    """Anything with a topic's id and label."""

    @property
    def id(self) -> str: ...
    @property
    def label(self) -> str: ...


def match_label[T: Labelled](topics: Iterable[T], query: str) -> T | None:
    """The topic whose label or id matches: exact, then prefix, then contains (accents
    folded); the shortest label wins within a rank."""
    wanted = fold_text(query.strip())
    if not wanted:
        return None
    pool = list(topics)
    for match in (
        lambda t: fold_text(t.label) == wanted or t.id == wanted.replace(" ", "-"),
        lambda t: fold_text(t.label).startswith(wanted),
        lambda t: wanted in fold_text(t.label) or wanted in t.id,
    ):
        if hits := [t for t in pool if match(t)]:
            return min(hits, key=lambda t: (len(t.label), t.id))
    return None


def is_kebab_id(value: object) -> bool:
    """Whether a value is a lowercase kebab-case topic id of sane length."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= MAX_ID_CHARS
        and KEBAB_ID_RE.match(value) is not None
    )


def to_kebab_id(label: str) -> str:
    """Turn a label into a topic id: "Ouderschapsverlof (betaald)" → "ouderschapsverlof-betaald"."""
    if not isinstance(label, str):
        raise KbInputError(f"a topic label must be a string, got {type(label).__name__}")
    folded = fold_text(label).encode("ascii", "ignore").decode("ascii")
    slug = _NON_ALNUM_RE.sub("-", folded).strip("-")
    if len(slug) > MAX_ID_CHARS:
        slug = slug[:MAX_ID_CHARS].rstrip("-")
    if not slug:
        raise KbInputError(
            f"cannot derive a topic id from label {label[:80]!r}: it has no letters or digits"
        )
    return slug


def kb_hash(topic_ids: Iterable[str]) -> str:
    """First 8 hex chars of sha256 over the sorted topic ids joined by newlines."""
    return kb_hash_of_sorted(sorted(topic_ids))


def kb_hash_of_sorted(sorted_ids: list[str]) -> str:
    """kb_hash of ids that are sorted already (an index keeps them so: no sort per update)."""
    return hashlib.sha256("\n".join(sorted_ids).encode("utf-8")).hexdigest()[:8]


def is_relation_type(name: str) -> TypeGuard[RelationType]:
    """Whether a name is one of the relation types of the vocabulary."""
    return name in RELATION_TYPES


def normalise_relation(source: str, target: str, type: str) -> tuple[str, str, RelationType] | None:
    """Map a relation onto the vocabulary: `executes` flips to `executed_by`; unknown → None."""
    kind = type.strip().lower() if isinstance(type, str) else ""
    if kind in LEGACY_RELATION_TYPES:
        return target, source, LEGACY_RELATION_TYPES[kind]
    if is_relation_type(kind):
        return source, target, kind
    return None
