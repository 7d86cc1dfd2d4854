"""Pydantic models of the learning content: the one source of the tool schemas and validation.

The minimums (sections, sentences, takeaways, slides, word caps, stats, steps) are
validators here, so a model reply that breaks them fails inside `call_llm` as an
LLMValidationError and nothing is cached.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

MIN_SECTIONS = 3
MIN_SENTENCES = 3
MIN_TAKEAWAYS = 2
MIN_SLIDES = 4
MAX_HEADLINE_WORDS = 8
MAX_TAGLINE_WORDS = 15
MIN_STATS = 3
MIN_STEPS = 3

Theme = Literal["ocean", "forest", "sunset", "grape", "graphite"]

PALETTE: dict[Theme, dict[str, str]] = {
    "ocean": {"bg": "#F2F7FB", "ink": "#0B2540", "accent": "#1565C0", "card": "#FFFFFF",
              "muted": "#4A6380"},
    "forest": {"bg": "#F3F8F2", "ink": "#1B3022", "accent": "#2E7D32", "card": "#FFFFFF",
               "muted": "#4F6B55"},
    "sunset": {"bg": "#FFF6EF", "ink": "#3A1F12", "accent": "#E65100", "card": "#FFFFFF",
               "muted": "#7A5441"},
    "grape": {"bg": "#F7F3FB", "ink": "#2A1540", "accent": "#6A1B9A", "card": "#FFFFFF",
              "muted": "#66547A"},
    "graphite": {"bg": "#F4F5F7", "ink": "#1F2328", "accent": "#37474F", "card": "#FFFFFF",
                 "muted": "#57606A"},
}  # fmt: skip
"""The fixed colour themes an infographic may use (hex RGB)."""

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=4000)]
Short = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=160)]

_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’)]*\s+")
_HAS_WORD = re.compile(r"\w")


def count_sentences(text: str) -> int:
    """Sentences in a text: pieces ending in . ! ? or … that contain a word."""
    return sum(1 for piece in _SENTENCE_END.split(text.strip()) if _HAS_WORD.search(piece))


def count_words(text: str) -> int:
    """Whitespace-separated words."""
    return len(text.split())


def heading_key(heading: str) -> str:
    """How headings are matched: case-insensitive, surrounding and inner spacing ignored."""
    return " ".join(heading.split()).casefold()


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class ArticleSection(_Model):
    """One section of an article: a heading and a body of at least three sentences."""

    heading: Short = Field(description="Short section heading (no numbering)")
    body: Text = Field(description=f"At least {MIN_SENTENCES} full sentences")

    @field_validator("body")
    @classmethod
    def _sentences(cls, body: str) -> str:
        found = count_sentences(body)
        if found < MIN_SENTENCES:
            raise ValueError(f"needs at least {MIN_SENTENCES} sentences, has {found}")
        return body


class Article(_Model):
    """A short learning article: title, intro, three or more sections, key takeaways."""

    title: Short
    intro: Text = Field(description="One or two sentences that make the reader curious")
    sections: list[ArticleSection] = Field(
        min_length=MIN_SECTIONS,
        max_length=8,
        description=f"At least {MIN_SECTIONS} sections with distinct headings",
    )
    key_takeaways: list[Short] = Field(
        min_length=MIN_TAKEAWAYS, max_length=8, description="Short, concrete takeaways"
    )

    @field_validator("sections")
    @classmethod
    def _distinct_headings(cls, sections: list[ArticleSection]) -> list[ArticleSection]:
        seen: set[str] = set()
        for section in sections:
            key = heading_key(section.heading)
            if key in seen:
                raise ValueError(f"two sections are headed {section.heading!r}")
            seen.add(key)
        return sections


class Slide(_Model):
    """One slide: a title, a few bullets and what the presenter says."""

    title: Short
    bullets: list[Short] = Field(min_length=1, max_length=6)
    speaker_note: Text = Field(description="What the presenter says with this slide")


class SlideDeck(_Model):
    """A slide deck of at least four slides."""

    title: Short
    slides: list[Slide] = Field(min_length=MIN_SLIDES, max_length=12)


class Stat(_Model):
    """A figure on the infographic: a short value and what it means."""

    value: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=16)] = (
        Field(description="A short figure, e.g. '3', '25%' or '5 min'")
    )
    label: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)] = (
        Field(description="What the figure counts, in a few words")
    )


class Step(_Model):
    """A numbered step; numbers run 1, 2, 3, …"""

    number: int = Field(ge=1)
    text: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200)]


class Infographic(_Model):
    """An infographic: headline, tagline, stats, numbered steps, a quote and a colour theme."""

    headline: Short = Field(description=f"At most {MAX_HEADLINE_WORDS} words")
    tagline: Short = Field(description=f"At most {MAX_TAGLINE_WORDS} words")
    stats: list[Stat] = Field(min_length=MIN_STATS, max_length=6)
    steps: list[Step] = Field(min_length=MIN_STEPS, max_length=6)
    quote: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300)]
    theme: Theme = Field(description="One of the fixed colour themes")

    @field_validator("headline")
    @classmethod
    def _headline_words(cls, value: str) -> str:
        if count_words(value) > MAX_HEADLINE_WORDS:
            raise ValueError(
                f"at most {MAX_HEADLINE_WORDS} words allowed, has {count_words(value)}"
            )
        return value

    @field_validator("tagline")
    @classmethod
    def _tagline_words(cls, value: str) -> str:
        if count_words(value) > MAX_TAGLINE_WORDS:
            raise ValueError(f"at most {MAX_TAGLINE_WORDS} words allowed, has {count_words(value)}")
        return value

    @field_validator("steps")
    @classmethod
    def _numbered(cls, steps: list[Step]) -> list[Step]:
        numbers = [step.number for step in steps]
        if numbers != list(range(1, len(steps) + 1)):
            raise ValueError(f"steps must be numbered 1..{len(steps)} in order, got {numbers}")
        return steps


class LearningBundle(_Model):
    """Article, slides and infographic of one topic, made in one call."""

    article: Article
    slides: SlideDeck
    infographic: Infographic


class CustomTopic(_Model):
    """A topic a user asked to learn about, polished into a label and description."""

    label: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=80)]
    description: Text = Field(description="Two or three sentences on what the topic covers")
    type: Literal["concept", "role", "process"] = "concept"
    learning_relevance: Literal["core", "standard", "peripheral"] | None = Field(
        default=None, description="Omit unless clearly core or peripheral (default standard)"
    )

    @property
    def relevance(self) -> str:
        """The learning relevance, `standard` when the model omitted it."""
        return self.learning_relevance or "standard"
