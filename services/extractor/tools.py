"""The extractor's tools: input schemas generated from these pydantic models."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shared.llm import Tool

TopicKind = Literal["concept", "role", "process"]
RelationKind = Literal["related_to", "depends_on", "part_of", "executed_by"]
LegacyRelationKind = Literal["related_to", "depends_on", "part_of", "executed_by", "executes"]
RelevanceKind = Literal["core", "standard", "peripheral", "exclude"]

_ID_HELP = (
    "Stable kebab-case id derived from the label (lowercase ascii letters, digits and "
    "hyphens, e.g. 'ouderschapsverlof'); reuse a known id when the text is about it"
)
_RELEVANCE_HELP = (
    "core: every employee must know it; standard: useful to most; peripheral: niche; "
    "exclude: not worth learning (boilerplate, contact details)"
)
_RELATION_HELP = (
    "related_to: associated; depends_on: source needs target first; part_of: source is a "
    "part of target; executed_by: the process (source) is carried out by the role (target)"
)


class _ToolInput(BaseModel):
    # Extra keys a model adds are ignored; missing or mistyped ones fail validation.
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)


class KgTopic(_ToolInput):
    """One topic found in the text."""

    id: str = Field(min_length=1, max_length=120, description=_ID_HELP)
    label: str = Field(min_length=1, max_length=200, description="Name as the text uses it")
    type: TopicKind
    description: str = Field(
        default="", max_length=2000, description="At most 3 sentences, only from the text"
    )
    learning_relevance: RelevanceKind = Field(default="standard", description=_RELEVANCE_HELP)


class KgRelation(_ToolInput):
    """A typed, directed relation between two topic ids."""

    source: str = Field(min_length=1, max_length=120)
    target: str = Field(min_length=1, max_length=120)
    type: RelationKind = Field(description=_RELATION_HELP)
    description: str = Field(default="", max_length=1000)

    @model_validator(mode="before")
    @classmethod
    def _legacy_executes(cls, data: Any) -> Any:
        # Older prompts said "A executes B"; that is "B executed_by A" in our vocabulary.
        if isinstance(data, dict) and str(data.get("type", "")).strip().lower() == "executes":
            data = {**data, "type": "executed_by", "source": data.get("target"),
                    "target": data.get("source")}  # fmt: skip
        return data


class KnowledgeGraph(_ToolInput):
    """The topics and relations of one chunk of a document."""

    topics: list[KgTopic] = Field(max_length=60)
    relations: list[KgRelation] = Field(default_factory=list, max_length=150)


class HandbookRelation(_ToolInput):
    """A relation in a handbook delta; the legacy `executes` is accepted and normalised."""

    source: str = Field(min_length=1, max_length=120)
    target: str = Field(min_length=1, max_length=120)
    type: LegacyRelationKind = Field(description=_RELATION_HELP)
    description: str = Field(default="", max_length=1000)


class HandbookDelta(_ToolInput):
    """The topics and relations a handbook file (or part of it) defines."""

    topics: list[KgTopic] = Field(max_length=60)
    relations: list[HandbookRelation] = Field(default_factory=list, max_length=150)


class MergeAction(_ToolInput):
    """Merge duplicates: keep one topic, delete the others (their relations move over)."""

    keep: str = Field(min_length=1, max_length=120)
    delete: list[str] = Field(min_length=1, max_length=20)
    reason: str = Field(default="", max_length=500)


class DeleteAction(_ToolInput):
    """Delete a topic that does not belong in the graph."""

    id: str = Field(min_length=1, max_length=120)
    reason: str = Field(default="", max_length=500)


class NewRelation(_ToolInput):
    """A missing relation between existing topics."""

    source: str = Field(min_length=1, max_length=120)
    target: str = Field(min_length=1, max_length=120)
    type: RelationKind = Field(description=_RELATION_HELP)
    description: str = Field(default="", max_length=500)


class RelevanceUpdate(_ToolInput):
    """A better learning relevance for a topic."""

    id: str = Field(min_length=1, max_length=120)
    relevance: RelevanceKind
    reason: str = Field(default="", max_length=500)


class GraphActions(_ToolInput):
    """Clean-up actions for the whole knowledge graph (empty lists when all is well)."""

    merges: list[MergeAction] = Field(default_factory=list, max_length=100)
    deletions: list[DeleteAction] = Field(default_factory=list, max_length=100)
    new_relations: list[NewRelation] = Field(default_factory=list, max_length=200)
    relevance_updates: list[RelevanceUpdate] = Field(default_factory=list, max_length=200)
    summary: str = Field(default="", max_length=2000)


EMIT_KNOWLEDGE_GRAPH = Tool(
    name="emit_knowledge_graph",
    description="Record the topics (concepts, roles, processes) and relations in the text.",
    model=KnowledgeGraph,
)
EMIT_HANDBOOK_DELTA = Tool(
    name="emit_handbook_delta",
    description="Record the topics and relations a company handbook file defines.",
    model=HandbookDelta,
)
EMIT_GRAPH_ACTIONS = Tool(
    name="emit_graph_actions",
    description="Propose merges, deletions, new relations and relevance updates.",
    model=GraphActions,
)
