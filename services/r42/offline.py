"""R42 without a language model: deterministic, grounded stand-ins for the model's choices.

The plans (`offline_plans`) are handed to the offline provider when the host builds the LLM
runtime (CI, `make up` without ANTHROPIC_API_KEY, `make eval`); the turn engine never knows.
In a free turn the plan decides as the model would (`plan_step`): call a tool, whose input
the tool plans derive from the request, or answer with `offline_answer`:

- a question that describes a missing role ("er is een rol X die …", also proces /
  begrip), or asks to add one ("kun je een onderwerp toevoegen over …", "voeg toe dat …",
  services.r42.intent) → propose_graph_delta with that topic (and a relation to a topic
  it names);
- a question that names a topic verbatim, or an id-like word that is not a topic →
  lookup_topic, one per step, at most 3 per turn;
- the answer: "[offline] " + the label and description of the looked-up topic, else of
  the best-matching context topic above the relevance floor, else "not in the knowledge
  graph"; in English for an English question (the KB's own text stays Dutch, and says so).
- small talk (services.r42.smalltalk): R42's greeting;
- search_kb, when a request forces it: the question itself (no reformulation offline).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from services.r42.intent import DUTCH_KIND, topic_request
from services.r42.knowledge import CONTEXT_MAX_TOPICS, KbSnapshot
from services.r42.lookup import normalise_id
from services.r42.prompts import GREETING, GREETING_EN, not_in_kb
from services.r42.proposals import summarize_delta, to_kb_delta
from services.r42.smalltalk import is_small_talk
from services.r42.tools import (
    LOOKUP_TOOL_NAME,
    MAX_QUERY_CHARS,
    PROPOSE_TOOL_NAME,
    SEARCH_TOOL_NAME,
)
from shared.kb import build_kb_context, detect_language, to_kebab_id, validate_delta
from shared.llm import OFFLINE_PREFIX, OfflinePlans, OfflineRequest, OfflineStep
from shared.store import Topic

ANSWER_CHARS = 500
_KINDS = {"rol": "role", "functie": "role", "proces": "process", "werkwijze": "process",
          "begrip": "concept", "concept": "concept"}  # fmt: skip
_MISSING_RE = re.compile(
    r"\ber\s+(?:is|bestaat)\s+(?:ook\s+)?(?:een|de)\s+(?P<kind>rol|functie|proces|werkwijze|"
    r"begrip|concept)\s+(?P<name>[^,.;:!?\n]{1,80}?)\s+die\s+(?P<rest>[^.!?\n]{1,400})",
    re.IGNORECASE,
)
_ID_LIKE_RE = re.compile(r"\b[a-z0-9]+(?:-[a-z0-9]+)+\b")
_QUOTES = "'\"“”‘’`"


def _tool_inputs(messages: Iterable[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    """Inputs of earlier tool_use blocks of one tool in this conversation."""
    found = []
    for message in messages:
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                if block.get("name") == name and isinstance(block.get("input"), dict):
                    found.append(block["input"])
    return found


def looked_up(messages: Iterable[dict[str, Any]]) -> set[str]:
    """Ids already passed to lookup_topic in this turn."""
    return {normalise_id(str(i.get("id", ""))) for i in _tool_inputs(messages, LOOKUP_TOOL_NAME)}


def lookup_target(question: str, snapshot: KbSnapshot | None, done: set[str]) -> str | None:
    """The next topic the question names (verbatim, or an unknown id-like word) to look up."""
    if snapshot is None:
        return None
    for hit in snapshot.index.search(question, k=10):
        if hit.verbatim and hit.topic_id not in done:
            return hit.topic_id
    words: list[str] = _ID_LIKE_RE.findall(question.lower())
    for word in words:
        if word not in snapshot.topics and word not in done:
            return str(word)
    return None


def missing_topic_delta(question: str, snapshot: KbSnapshot | None) -> dict[str, Any] | None:
    """A delta for "er is een rol X die …" or a request to add a topic, else None."""
    match = _MISSING_RE.search(question)
    if match is None:
        return _requested_delta(question, snapshot)
    name = " ".join(match["name"].strip(_QUOTES + " ").split())
    rest = " ".join(match["rest"].split()).rstrip(_QUOTES + " ")
    kind = match["kind"].lower()
    label = name[:1].upper() + name[1:]
    missing = "ontbrekend" if kind in ("proces", "begrip", "concept") else "ontbrekende"  # het/de
    reason = f"Een gebruiker meldt een {missing} {kind}: {label}."
    return _delta(label, _KINDS[kind], f"{kind.capitalize()} die {rest}.", reason, rest, snapshot)


def _requested_delta(question: str, snapshot: KbSnapshot | None) -> dict[str, Any] | None:
    request = topic_request(question)
    if request is None:
        return None
    reason = f"Een gebruiker vraagt om {DUTCH_KIND[request.type]} {request.label} toe te voegen."
    return _delta(request.label, request.type, request.description, reason,
                  request.description, snapshot)  # fmt: skip


def _delta(
    label: str, kind: str, description: str, reason: str, text: str, snapshot: KbSnapshot | None
) -> dict[str, Any] | None:
    """One new topic, related to the topic its text names verbatim (if any)."""
    try:
        topic_id = to_kebab_id(label)
    except ValueError:
        return None
    relations = []
    if snapshot is not None and text:
        named = [h for h in snapshot.index.search(text, k=5) if h.verbatim]
        if named and named[0].topic_id != topic_id:
            other = snapshot.topics[named[0].topic_id]
            if other.type == "process" and kind == "role":
                relations.append({"source": other.id, "target": topic_id, "type": "executed_by"})
            else:
                relations.append({"source": topic_id, "target": other.id, "type": "related_to"})
    topic = {"id": topic_id, "label": label, "type": kind, "description": description}
    return {"reason": reason, "topics": [topic], "relations": relations}


def plan_step(
    *, question: str, snapshot: KbSnapshot | None, messages: list[dict[str, Any]]
) -> dict[str, Any]:
    """The tool_choice the offline "model" makes at this step of the tool loop."""
    proposed = bool(_tool_inputs(messages, PROPOSE_TOOL_NAME))
    if not proposed and missing_topic_delta(question, snapshot) is not None:
        return {"type": "tool", "name": PROPOSE_TOOL_NAME}
    if lookup_target(question, snapshot, looked_up(messages)) is not None:
        return {"type": "tool", "name": LOOKUP_TOOL_NAME}
    return {"type": "none"}


def offline_answer(
    *,
    context_ids: Sequence[str],
    snapshot: KbSnapshot,
    found: Sequence[Topic],
    proposal_summary: str | None,
    language: str = "nl",
) -> str:
    """The offline turn's text, built from what the turn found (English for "en")."""
    english = language == "en"
    if proposal_summary is not None and english:
        return (
            f"{OFFLINE_PREFIX}Thanks, that is not in the knowledge graph yet. I have prepared "
            f"a proposal: {proposal_summary} Confirm it if it is right."
        )
    if proposal_summary is not None:
        return (
            f"{OFFLINE_PREFIX}Dank je, dat staat nog niet in de kennisgraaf. Ik heb een "
            f"voorstel klaargezet: {proposal_summary} Bevestig het als het klopt."
        )
    best = found[0] if found else None
    if best is None and context_ids:
        best = snapshot.topics.get(context_ids[0])
    if best is None:
        return OFFLINE_PREFIX + not_in_kb(language)
    description = " ".join(best.description.split())
    if len(description) > ANSWER_CHARS:
        description = description[: ANSWER_CHARS - 1].rsplit(" ", 1)[0] + "…"
    if english:
        if not description:
            return f"{OFFLINE_PREFIX}{best.label} is in the knowledge graph, without a description."
        return f"{OFFLINE_PREFIX}From the knowledge graph (in Dutch): {best.label}: {description}"
    if not description:
        return f"{OFFLINE_PREFIX}{best.label} staat in de kennisgraaf, maar zonder beschrijving."
    return f"{OFFLINE_PREFIX}{best.label}: {description}"


def _tool_outcomes(messages: Iterable[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(tool name, input) of this turn's tool calls that did not come back as errors."""
    failed = {
        block.get("tool_use_id")
        for message in messages
        if message.get("role") == "user" and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result" and block.get("is_error")
    }
    return [
        (str(block.get("name")), block.get("input") or {})
        for message in messages
        if message.get("role") == "assistant" and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_use"
        and block.get("id") not in failed
    ]  # fmt: skip


def answer_from_turn(request: OfflineRequest, snapshot: KbSnapshot) -> str:
    """The final text of a turn: the proposal made, else a topic looked up or in context."""
    if is_small_talk(request.user):
        english = detect_language(request.user) == "en"
        return OFFLINE_PREFIX + (GREETING_EN if english else GREETING)
    found: list[Topic] = []
    summary: str | None = None
    for name, tool_input in _tool_outcomes(request.messages):
        if name == LOOKUP_TOOL_NAME:
            topic = snapshot.topics.get(normalise_id(str(tool_input.get("id", ""))))
            if topic is not None:
                found.append(topic)
        elif name == PROPOSE_TOOL_NAME and summary is None:
            delta = validate_delta(tool_input, snapshot.topics)
            if delta is not None:
                summary = summarize_delta(to_kb_delta(delta))
    context = build_kb_context(
        request.user, index=snapshot.index, topics=snapshot.topics,
        relations=snapshot.relations, max_topics=CONTEXT_MAX_TOPICS,
    ) if request.user.strip() else None  # fmt: skip
    return offline_answer(
        context_ids=context.topic_ids if context else (), snapshot=snapshot, found=found,
        proposal_summary=summary, language=detect_language(request.user),
    )  # fmt: skip


def offline_plans(current: Callable[[], KbSnapshot | None]) -> OfflinePlans:
    """R42's offline stand-ins: the free turn and the inputs of its two tools."""

    def lookup_input(request: OfflineRequest) -> dict[str, Any]:
        target = lookup_target(request.user, current(), looked_up(request.messages))
        return {"id": target or ""}

    def search_input(request: OfflineRequest) -> dict[str, Any]:
        return {"query": " ".join(request.user.split())[:MAX_QUERY_CHARS]}

    def propose_input(request: OfflineRequest) -> dict[str, Any]:
        return missing_topic_delta(request.user, current()) or {"reason": ""}

    def turn(request: OfflineRequest) -> OfflineStep:
        snapshot = current()
        if request.tool_choice != "none":
            step = plan_step(question=request.user, snapshot=snapshot, messages=request.messages)
            if step["type"] == "tool":
                return OfflineStep(tool=step["name"])
        if snapshot is None:
            return OfflineStep(text=OFFLINE_PREFIX + not_in_kb(detect_language(request.user)))
        return OfflineStep(text=answer_from_turn(request, snapshot))

    return OfflinePlans(
        tools={
            SEARCH_TOOL_NAME: search_input,
            LOOKUP_TOOL_NAME: lookup_input,
            PROPOSE_TOOL_NAME: propose_input,
        },
        turns={LOOKUP_TOOL_NAME: turn},
    )
