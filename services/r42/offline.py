"""R42 without a language model: deterministic, grounded stand-ins for the model's choices.

With the offline provider (CI, `make up` without ANTHROPIC_API_KEY, `make eval`) the turn
engine asks `plan_step` which tool the "model" would call and forces it; the handlers
registered for lookup_topic and propose_graph_delta (see `register_offline_handlers`)
derive the tool input from the request; the final text is `offline_answer`:

- a question that describes a missing role ("er is een rol X die …", also proces /
  begrip) → propose_graph_delta with that topic (and a relation to a topic it names);
- a question that names a topic verbatim, or an id-like word that is not a topic →
  lookup_topic, one per step, at most 3 per turn;
- the answer: "[offline] " + the label and description of the looked-up topic, else of
  the best-matching context topic, else "Dat staat niet in de kennisgraaf."
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from services.r42.knowledge import KbSnapshot
from services.r42.lookup import LookupResult, normalise_id
from services.r42.tools import LOOKUP_TOOL_NAME, PROPOSE_TOOL_NAME
from shared.bus import Proposal
from shared.kb import KbContext, to_kebab_id
from shared.llm import OFFLINE_PREFIX, OfflineRequest, register_offline_handler

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
    for word in _ID_LIKE_RE.findall(question.lower()):
        if word not in snapshot.topics and word not in done:
            return word
    return None


def missing_topic_delta(question: str, snapshot: KbSnapshot | None) -> dict[str, Any] | None:
    """A delta for "er is een rol X die …" (rol / proces / begrip), or None."""
    match = _MISSING_RE.search(question)
    if match is None:
        return None
    name = " ".join(match["name"].strip(_QUOTES + " ").split())
    rest = " ".join(match["rest"].split()).rstrip(_QUOTES + " ")
    kind = match["kind"].lower()
    try:
        topic_id = to_kebab_id(name)
    except ValueError:
        return None
    label = name[:1].upper() + name[1:]
    relations = []
    if snapshot is not None:
        named = [h for h in snapshot.index.search(rest, k=5) if h.verbatim]
        if named and named[0].topic_id != topic_id:
            other = snapshot.topics[named[0].topic_id]
            if other.type == "process" and _KINDS[kind] == "role":
                relations.append({"source": other.id, "target": topic_id, "type": "executed_by"})
            else:
                relations.append({"source": topic_id, "target": other.id, "type": "related_to"})
    topic = {
        "id": topic_id,
        "label": label,
        "type": _KINDS[kind],
        "description": f"{kind.capitalize()} die {rest}.",
    }
    reason = f"Een gebruiker meldt een ontbrekende {kind}: {label}."
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
    context: KbContext,
    snapshot: KbSnapshot,
    lookups: list[LookupResult],
    proposal: Proposal | None,
) -> str:
    """The offline turn's text, built from what the turn found."""
    if proposal is not None:
        return (
            f"{OFFLINE_PREFIX}Dank je, dat staat nog niet in de kennisgraaf. Ik heb een "
            f"voorstel klaargezet: {proposal.summary} Bevestig het als het klopt."
        )
    found = [r.topic for r in lookups if r.topic is not None]
    best = found[0] if found else None
    if best is None and context.topic_ids:
        best = snapshot.topics.get(context.topic_ids[0])
    if best is None:
        return f"{OFFLINE_PREFIX}Dat staat niet in de kennisgraaf."
    description = " ".join(best.description.split())
    if len(description) > ANSWER_CHARS:
        description = description[: ANSWER_CHARS - 1].rsplit(" ", 1)[0] + "…"
    if not description:
        return f"{OFFLINE_PREFIX}{best.label} staat in de kennisgraaf, maar zonder beschrijving."
    return f"{OFFLINE_PREFIX}{best.label}: {description}"


def register_offline_handlers(current: Callable[[], KbSnapshot | None]) -> None:
    """Let the offline provider fill R42's tool inputs from the request and the KB snapshot."""

    def lookup_input(request: OfflineRequest) -> dict[str, Any]:
        target = lookup_target(request.user, current(), looked_up(request.messages))
        return {"id": target or ""}

    def propose_input(request: OfflineRequest) -> dict[str, Any]:
        return missing_topic_delta(request.user, current()) or {"reason": ""}

    register_offline_handler(LOOKUP_TOOL_NAME, lookup_input)
    register_offline_handler(PROPOSE_TOOL_NAME, propose_input)
