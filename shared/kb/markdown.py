"""Deterministic markdown → topics mapping: every `## Heading` is one topic.

The heading text is the label and its kebab-case form the id ("Ouderschapsverlof" →
`ouderschapsverlof`); the section body (including `###` subsections) is the description.
A file's front matter may set `type: role | process | concept` for all its sections, and
an HTML comment `<!-- type: process -->` right under a heading overrides it for that
section (GitHub does not render it). The offline extractor reuses this mapping.
"""

from __future__ import annotations

import re

from shared.kb.models import TOPIC_TYPES, KbInputError, KbTopic, to_kebab_id

MAX_DESCRIPTION_CHARS = 2000

_FRONT_MATTER_RE = re.compile(r"\A---[ \t]*\n(.*?)\n---[ \t]*(?:\n|\Z)", re.DOTALL)
_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_H2_RE = re.compile(r"^##[ \t]+(.+?)[ \t#]*$")
_TYPE_COMMENT_RE = re.compile(r"^\s*<!--\s*type:\s*([a-z]+)\s*-->\s*$", re.IGNORECASE)
_COMMENT_RE = re.compile(r"<!--.*?-->", re.DOTALL)
_LINK_RE = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_EMPHASIS_RE = re.compile(r"(\*\*|__|\*|`)")


def _front_matter_type(text: str) -> tuple[str, str]:
    """The file-wide topic type from front matter (default concept) and the remaining text."""
    match = _FRONT_MATTER_RE.match(text)
    if not match:
        return "concept", text
    kind = "concept"
    for line in match.group(1).splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() == "type" and value.strip().lower() in TOPIC_TYPES:
            kind = value.strip().lower()
    return kind, text[match.end() :]


def _plain(body: list[str]) -> str:
    """Section body as plain prose: comments, link targets and emphasis markers removed."""
    text = _COMMENT_RE.sub("", "\n".join(body))
    text = _LINK_RE.sub(r"\1", text)
    text = _EMPHASIS_RE.sub("", text)
    lines = [line.strip().lstrip("#>-*+ ").strip() for line in text.splitlines()]
    prose = " ".join(line for line in lines if line)
    if len(prose) > MAX_DESCRIPTION_CHARS:
        prose = prose[: MAX_DESCRIPTION_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return prose


def topics_from_markdown(text: str, *, source: str) -> list[KbTopic]:
    """One KbTopic per `##` heading, in document order; repeated headings are merged."""
    if not isinstance(text, str):
        raise KbInputError(f"markdown must be a string, got {type(text).__name__}")
    if not isinstance(source, str) or not source.strip():
        raise KbInputError("source must name the document the topics come from")
    default_type, text = _front_matter_type(text.replace("\r\n", "\n"))
    sections: dict[str, tuple[str, str, list[str]]] = {}  # id → (label, type, body lines)
    current: list[str] | None = None
    in_fence = False
    expect_type_for: str | None = None
    for line in text.split("\n"):
        if _FENCE_RE.match(line):
            in_fence = not in_fence
        heading = None if in_fence else _H2_RE.match(line)
        if heading:
            label = heading.group(1).strip()
            topic_id = to_kebab_id(label)
            if topic_id not in sections:
                sections[topic_id] = (label, default_type, [])
            current = sections[topic_id][2]
            expect_type_for = topic_id
            continue
        if not in_fence and line.startswith("# "):
            current, expect_type_for = None, None  # a new document title ends the section
            continue
        override = _TYPE_COMMENT_RE.match(line) if expect_type_for else None
        if expect_type_for and override and override.group(1).lower() in TOPIC_TYPES:
            label, _, body = sections[expect_type_for]
            sections[expect_type_for] = (label, override.group(1).lower(), body)
            continue
        if line.strip():
            expect_type_for = None
        if current is not None:
            current.append(line)
    return [
        KbTopic(id=topic_id, label=label, type=kind, description=_plain(body), source=source)
        for topic_id, (label, kind, body) in sections.items()
    ]
