"""Deterministic offline output for the extractor's tools (CI, `make up` without a key).

Topics come from the chunk's markdown headings (shared.kb.topics_from_markdown: ids are
the kebab form of the headings, so re-ingesting reuses them); the document title (`# …`)
becomes an overview topic the sections are part_of; a section that names another topic
is related_to it (executed_by when a process names a role of the same document).
"""

from __future__ import annotations

import difflib
import re
from pathlib import PurePosixPath
from typing import Any

from services.extractor.pipeline import first_sentences
from services.extractor.prompts import GRAPH_CLOSE, GRAPH_OPEN, split_document_message
from services.extractor.tools import EMIT_GRAPH_ACTIONS, EMIT_HANDBOOK_DELTA, EMIT_KNOWLEDGE_GRAPH
from shared.kb import fold_text, to_kebab_id, topics_from_markdown
from shared.llm import OfflinePlans, OfflineRequest

_H1_RE = re.compile(r"^#[ \t]+(.+?)[ \t#]*$")
_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_MAX_RELATED = 5
_MIN_MENTION_CHARS = 4
_NEAR_DUPLICATE = 0.9
# The tool schema's limits (services.extractor.tools): the offline answers stay inside them.
_MAX_ID, _MAX_LABEL, _MAX_DESCRIPTION = 120, 200, 2000
_MAX_TOPICS, _MAX_RELATIONS = 60, 150


def _title_and_intro(markdown: str) -> tuple[str | None, str]:
    """The first `# Title` (outside code fences) and the prose before the first `##`."""
    title, intro, in_fence = None, [], False
    for line in markdown.splitlines():
        if _FENCE_RE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if line.startswith("## "):
            if title is not None:
                break
            continue
        heading = _H1_RE.match(line)
        if heading and title is None:
            title = heading.group(1).strip()
        elif title is not None and line.strip():
            intro.append(line.strip())
    return title, " ".join(intro)


def _topic(topic_id: str, label: str, kind: str, text: str) -> dict[str, Any]:
    return {
        "id": topic_id,
        "label": label,
        "type": kind,
        "description": first_sentences(" ".join(text.split())),
        "learning_relevance": "standard",
    }


def _mentions(text: str, topic_id: str) -> bool:
    phrase = topic_id.replace("-", " ")
    # The substring test first: most known ids are not in a section at all (the hint holds up
    # to 200), and it is far cheaper than building a pattern for each.
    if len(phrase) < _MIN_MENTION_CHARS or phrase not in text:
        return False
    return re.search(rf"\b{re.escape(phrase)}\b", text) is not None


def derive_graph(markdown: str, *, name: str, known_ids: list[str]) -> dict[str, Any]:
    """Topics and relations of a markdown text from its structure alone."""
    sections = topics_from_markdown(markdown, source=name)
    topics: list[dict[str, Any]] = []
    relations: list[dict[str, Any]] = []
    title, intro = _title_and_intro(markdown)
    parent = None
    if title:
        try:
            parent = to_kebab_id(title)
        except ValueError:
            parent = None
    if title and parent is not None and parent not in {s.id for s in sections}:
        topics.append(_topic(parent, title, "concept", intro))
    for section in sections:
        topics.append(_topic(section.id, section.label, section.type, section.description))
        if parent is not None and parent != section.id:
            relations.append({"source": section.id, "target": parent, "type": "part_of"})
    if not topics:
        # Plain text without headings: one topic named after the document.
        stem = PurePosixPath(name).stem.replace("-", " ").replace("_", " ").strip() or name
        try:
            topic_id = to_kebab_id(stem)
        except ValueError:
            return {"topics": [], "relations": []}
        label = stem[:1].upper() + stem[1:]
        return {"topics": [_topic(topic_id, label, "concept", markdown)], "relations": []}
    kinds = {t["id"]: t["type"] for t in topics}
    candidates = list(dict.fromkeys([*known_ids, *kinds]))
    for section in sections:
        body = fold_text(section.description)
        found = [c for c in candidates if c not in (section.id, parent) and _mentions(body, c)]
        for other in found[:_MAX_RELATED]:
            if kinds.get(section.id) == "process" and kinds.get(other) == "role":
                relations.append({"source": section.id, "target": other, "type": "executed_by"})
            else:
                relations.append({"source": section.id, "target": other, "type": "related_to"})
    return {"topics": topics, "relations": relations}


def _clip(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word boundary with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    return (text[: limit - 1].rsplit(" ", 1)[0] or text[: limit - 1]) + "…"


def fit_schema(graph: dict[str, Any]) -> dict[str, Any]:
    """The graph within the tool schema's limits (ids, labels, descriptions, list sizes).

    A real handbook has headings longer than a label may be and sections longer than a
    description: the offline provider must answer what the schema accepts, like a model.
    """
    ids: dict[str, str] = {}
    topics: list[dict[str, Any]] = []
    for topic in graph["topics"]:
        short = topic["id"][:_MAX_ID].rstrip("-") or topic["id"][:_MAX_ID]
        if short in ids.values() or len(topics) >= _MAX_TOPICS:
            continue
        ids[topic["id"]] = short
        topics.append({**topic, "id": short, "label": _clip(topic["label"], _MAX_LABEL),
                       "description": _clip(topic["description"], _MAX_DESCRIPTION)})  # fmt: skip
    relations: list[dict[str, Any]] = []
    for relation in graph["relations"]:
        source = ids.get(relation["source"], relation["source"][:_MAX_ID].rstrip("-"))
        target = ids.get(relation["target"], relation["target"][:_MAX_ID].rstrip("-"))
        if source and target and source != target and len(relations) < _MAX_RELATIONS:
            relations.append({**relation, "source": source, "target": target})
    return {"topics": topics, "relations": relations}


def offline_knowledge_graph(request: OfflineRequest) -> dict[str, Any]:
    """emit_knowledge_graph / emit_handbook_delta offline: topics from the headings."""
    parsed = split_document_message(request.user)
    if parsed is None:
        return {"topics": [], "relations": []}
    name, document, known = parsed
    return fit_schema(derive_graph(document, name=name, known_ids=known))


def _graph_rows(text: str) -> tuple[list[list[str]], list[list[str]]]:
    start, end = text.find(GRAPH_OPEN), text.rfind(GRAPH_CLOSE)
    topics: list[list[str]] = []
    relations: list[list[str]] = []
    section = None
    for line in text[start + len(GRAPH_OPEN) : end].splitlines():
        if line.startswith("[topics"):
            section = topics
        elif line.startswith("[relations"):
            section = relations
        elif section is not None and line.strip():
            section.append([part.strip() for part in line.split(" | ")])
    return topics, relations


def _label_key(label: str) -> str:
    return re.sub(r"[^a-z0-9]", "", fold_text(label))


def offline_graph_actions(request: OfflineRequest) -> dict[str, Any]:
    """emit_graph_actions offline: merge topics whose labels are near-duplicates."""
    topics, relations = _graph_rows(request.user)
    degree: dict[str, int] = {}
    for row in relations:
        if len(row) == 3:
            for end in (row[0], row[2]):
                degree[end] = degree.get(end, 0) + 1
    rows = [(row[0], row[1]) for row in topics if len(row) >= 2]
    taken: set[str] = set()
    merges = []
    for i, (first_id, first_label) in enumerate(rows):
        if first_id in taken:
            continue
        group = [first_id]
        for other_id, other_label in rows[i + 1 :]:
            if other_id in taken:
                continue
            a, b = _label_key(first_label), _label_key(other_label)
            if a and (a == b or difflib.SequenceMatcher(None, a, b).ratio() >= _NEAR_DUPLICATE):
                group.append(other_id)
        if len(group) < 2:
            continue
        keep = min(group, key=lambda t: (-degree.get(t, 0), len(t), t))
        taken.update(group)
        merges.append({"keep": keep, "delete": [t for t in group if t != keep],
                       "reason": "near-duplicate labels"})  # fmt: skip
    summary = f"{len(merges)} near-duplicate group(s)" if merges else "no near-duplicates"
    return {"merges": merges, "summary": f"offline analysis: {summary}"}


def offline_plans() -> OfflinePlans:
    """The offline provider's meaningful output for the extractor's tools."""
    return OfflinePlans(
        tools={
            EMIT_KNOWLEDGE_GRAPH.name: offline_knowledge_graph,
            EMIT_HANDBOOK_DELTA.name: offline_knowledge_graph,
            EMIT_GRAPH_ACTIONS.name: offline_graph_actions,
        }
    )
