"""Request/reply contract of admin topic actions on the KG owner (`rpc.extractor.topic`).

Every surface (Slack, Teams, the console, the CLI) sends the same request; the extractor
authorises the actor against its own admin list, applies the change with provenance and
an undo record, audits it (refusals too) and announces kb.updated. A reply never raises
for a refusal: `outcome` says what happened, so each surface words it in its own language.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shared.store import AuditSurface, LearningRelevance, RelationType, Topic, TopicType
from shared.store._common import TopicId

TOPIC_ACTION_SUBJECT = "rpc.extractor.topic"
"""An admin edits, deletes or merges a topic or changes a relation: TopicAction → TopicReply."""

TopicActionKind = Literal["edit", "delete", "merge", "relation_add", "relation_remove"]
TopicOutcome = Literal["done", "unchanged", "refused", "not_found", "invalid"]


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TopicEdit(_Frozen):
    """The fields to change (None leaves one as it is); lock True locks, False unlocks."""

    label: str | None = Field(default=None, min_length=1, max_length=200)
    type: TopicType | None = None
    description: str | None = Field(default=None, max_length=4000)
    learning_relevance: LearningRelevance | None = None
    lock: bool | None = None

    @property
    def empty(self) -> bool:
        """Whether nothing is asked."""
        return all(v is None for v in self.model_dump().values())


class RelationSpec(_Frozen):
    """A relation of the topic: to (or, not outgoing, from) another topic."""

    other: TopicId
    type: RelationType
    outgoing: bool = True
    description: str | None = Field(default=None, max_length=500)


class TopicAction(_Frozen):
    """One admin action on one topic; who acts is authorised by the owner, never claimed."""

    actor: str = Field(min_length=1, max_length=200)
    surface: AuditSurface
    action: TopicActionKind
    topic_id: TopicId
    edit: TopicEdit | None = None
    into: TopicId | None = None
    relation: RelationSpec | None = None

    @model_validator(mode="after")
    def _arguments_fit(self) -> TopicAction:
        needs = {"edit": "edit", "merge": "into", "relation_add": "relation",
                 "relation_remove": "relation"}  # fmt: skip
        wanted = needs.get(self.action)
        for name in ("edit", "into", "relation"):
            given = getattr(self, name) is not None
            if given != (name == wanted):
                state = "needs" if name == wanted else "takes no"
                raise ValueError(f"action {self.action} {state} {name}")
        if self.action == "merge" and self.into == self.topic_id:
            raise ValueError("a topic cannot be merged into itself")
        if self.relation is not None and self.relation.other == self.topic_id:
            raise ValueError("a relation cannot point at its own topic")
        return self


class TopicReply(_Frozen):
    """What the owner did: the outcome, the topic after it, and the audit's before/after."""

    outcome: TopicOutcome
    detail: str = Field(default="", max_length=2000)
    topic: Topic | None = None
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    removed_relations: int = Field(default=0, ge=0)
    undo_batch: str | None = None


TOPIC_CARD_SUBJECT = "rpc.extractor.topic_card"
"""Everything a topic card shows, from the KG owner (it alone knows the provenance)."""


class TopicCardRequest(_Frozen):
    """The card of one topic, by id or label (exact, then prefix, then contains)."""

    query: str = Field(min_length=1, max_length=300)


class TopicSourceRef(_Frozen):
    """A source asserting the topic; url links a handbook file."""

    id: str
    name: str
    url: str | None = None


class TopicNeighbour(_Frozen):
    """One relation of the topic and the topic at its other end."""

    type: RelationType
    outgoing: bool
    topic_id: TopicId
    label: str


class TopicCard(_Frozen):
    """A topic with its sources, relations and which fields an admin set."""

    topic: Topic
    sources: list[TopicSourceRef] = Field(default_factory=list)
    relations: list[TopicNeighbour] = Field(default_factory=list)
    curated: list[str] = Field(default_factory=list)


class TopicCardReply(_Frozen):
    """The card, or None when no topic matches."""

    card: TopicCard | None = None
