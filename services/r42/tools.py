"""The tools R42's model may call, with input models lenient enough to never fail a turn.

Validation that matters happens after the call: a `search_kb` query must be a string of
1 to MAX_QUERY_CHARS characters (checked on the raw input, so a number or a list is refused
rather than coerced), `lookup_topic` ids are checked against the store,
`propose_graph_delta` input goes through `shared.kb.validate_delta`. The input
models therefore accept anything roughly shaped right (unknown keys ignored, every field
defaulted), so a sloppy tool call yields an error tool_result the model can react to
instead of an exception that ends the turn. The JSON schema still tells the model the
vocabulary and the caps (enum / maxItems are hints here, enforced by validate_delta).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from shared.kb import MAX_DELTA_RELATIONS, MAX_DELTA_TOPICS, RELATION_TYPES, TOPIC_TYPES
from shared.llm import Tool

SEARCH_TOOL_NAME = "search_kb"
LOOKUP_TOOL_NAME = "lookup_topic"
PROPOSE_TOOL_NAME = "propose_graph_delta"


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore")


MAX_QUERY_CHARS = 200
MAX_ID_CHARS = 200
MAX_TOOL_HOPS = 3
"""Model rounds answered with tool calls per turn (search_kb and lookup_topic calls: as many)."""


class SearchKbInput(_Lenient):
    """Input of search_kb."""

    model_config = ConfigDict(extra="ignore", json_schema_extra={"required": ["query"]})

    # Any: a number or list must reach the turn (an error result), not fail the call.
    query: Any = Field(
        default="",
        description=(
            "Search words in Dutch (the knowledge graph is Dutch): other words, synonyms or a "
            "translation of the question."
        ),
        json_schema_extra={"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS},
    )


class LookupTopicInput(_Lenient):
    """Input of lookup_topic."""

    # Any, as search_kb's query: the turn answers a non-string id with an error result.
    id: Any = Field(
        default="",
        description="The topic id, as shown in [brackets] in the context.",
        json_schema_extra={"type": "string", "maxLength": MAX_ID_CHARS},
    )


class ProposedTopic(_Lenient):
    """A topic a proposal adds."""

    id: str = Field(default="", description="kebab-case id; left empty it is derived from label")
    label: str = Field(default="", description="Short human-readable name")
    type: str = Field(default="concept", json_schema_extra={"enum": list(TOPIC_TYPES)})
    description: str = Field(default="", description="One or two sentences, in Dutch")


class ProposedRelation(_Lenient):
    """A relation a proposal adds between two topic ids (existing or proposed)."""

    source: str = ""
    target: str = ""
    type: str = Field(default="related_to", json_schema_extra={"enum": list(RELATION_TYPES)})
    description: str = ""


class ProposeGraphDeltaInput(_Lenient):
    """Input of propose_graph_delta: additions only (there is no way to delete)."""

    reason: str = Field(default="", description="Why the knowledge graph should change")
    topics: list[ProposedTopic] = Field(
        default_factory=list, json_schema_extra={"maxItems": MAX_DELTA_TOPICS}
    )
    relations: list[ProposedRelation] = Field(
        default_factory=list, json_schema_extra={"maxItems": MAX_DELTA_RELATIONS}
    )


SEARCH_TOOL = Tool(
    name=SEARCH_TOOL_NAME,
    description=(
        "Search the knowledge graph again with other words when the context does not cover "
        "the question: synonyms, a noun instead of a verb, or the Dutch translation of an "
        "English question. Returns at most 5 matching topics (id, label, type, a short "
        "description), or says that nothing matches. Together with lookup_topic at most "
        f"{MAX_TOOL_HOPS} calls per question."
    ),
    model=SearchKbInput,
)

LOOKUP_TOOL = Tool(
    name=LOOKUP_TOOL_NAME,
    description=(
        "Fetch one knowledge-graph topic in full: its whole description, its relations and "
        "the learning content generated for it. Use an id from the context or from search_kb. "
        f"Together with search_kb at most {MAX_TOOL_HOPS} calls per question."
    ),
    model=LookupTopicInput,
)

PROPOSE_TOOL = Tool(
    name=PROPOSE_TOOL_NAME,
    description=(
        "Propose adding topics (at most 3) and relations (at most 5) to the knowledge graph "
        "when the user tells you something that is missing or wrong. Relation types: "
        "related_to, depends_on, part_of, executed_by (a process is executed_by a role). "
        "Nothing changes until the user confirms and an admin approves; nothing can be "
        "deleted."
    ),
    model=ProposeGraphDeltaInput,
)

# Fixed order: the tools open the cached prefix, so it must not change between requests.
TOOLS: tuple[Tool, ...] = (SEARCH_TOOL, LOOKUP_TOOL, PROPOSE_TOOL)
