"""Models of the service state that has its own collections: proposals, chat turns, feedback,
uploads, idempotency keys, custom topics, flags, locks and extraction progress."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.errors import BadInputError
from shared.store._common import NonEmpty, TopicId, UtcDatetime, Week
from shared.store.models import LearningRelevance, TopicType

ProposalStatus = Literal["open", "applied", "pending_review", "declined"]
DecidedStatus = Literal["applied", "pending_review", "declined"]
FeedbackValue = Literal["up", "down"]

# How long an answer stays votable: its turn is forgotten after this.
TURN_RETENTION = timedelta(days=30)

PROPOSAL_STATUSES: tuple[str, ...] = ("open", "applied", "pending_review", "declined")
DECIDED_STATUSES: tuple[str, ...] = ("applied", "pending_review", "declined")


def check_decided(status: str) -> str:
    """A decision status, or BadInputError naming the valid ones."""
    if status not in DECIDED_STATUSES:
        raise BadInputError(
            f"a proposal is decided as {', '.join(DECIDED_STATUSES)}, not {status!r}"
        )
    return status


def check_increments(*counts: int) -> None:
    """Merge progress only grows: BadInputError for a negative count."""
    if any(n < 0 for n in counts):
        raise BadInputError("merge progress only grows: counts must not be negative")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ChatProposal(_Model):
    """A graph delta R42 proposed in chat, waiting for the user's (or an admin's) Yes / No."""

    id: NonEmpty
    delta: dict[str, Any]
    summary: str = ""
    proposed_by: NonEmpty
    prompt_version: str | None = None
    status: ProposalStatus = "open"
    decided_by: str | None = None
    decided_at: UtcDatetime | None = None
    suggestion_id: str | None = None
    # Set by each decision, so only the decision that won can reopen the proposal.
    decision_token: str | None = None
    created_at: UtcDatetime | None = None


class TurnContent(_Model):
    """What one answer was made of: question, retrieved topic ids, answer, model, prompt version."""

    question: str = ""
    topic_ids: list[TopicId] = Field(default_factory=list)
    answer: str = ""
    model: str | None = None
    prompt_version: str | None = None

    def content(self) -> TurnContent:
        """Only the answer's content (what a vote copies from its turn)."""
        return TurnContent.model_validate(self.model_dump(include=set(TurnContent.model_fields)))


class ChatTurn(TurnContent):
    """One answer as it was shown, remembered for the votes it may get."""

    turn_id: NonEmpty = Field(max_length=200)
    user: NonEmpty
    created_at: UtcDatetime | None = None
    expires_at: UtcDatetime | None = None
    kb_miss: bool = False  # R42 said the KB has nothing on the question: the gap list reads it

    def dated(self, now: datetime) -> ChatTurn:
        """This turn with created_at (default now) and expires_at (TURN_RETENTION later)."""
        created = self.created_at or now
        expires = self.expires_at or created + TURN_RETENTION
        return self.model_validate(
            {**self.model_dump(), "created_at": created, "expires_at": expires}
        )


class FeedbackVote(TurnContent):
    """A 👍 / 👎 on one answer, with the turn it rates (one vote per user per answer)."""

    turn_id: NonEmpty = Field(max_length=200)
    user: NonEmpty
    value: FeedbackValue
    conversation: str | None = None
    surface: str | None = None
    reason: str | None = Field(default=None, max_length=4000)
    created_at: UtcDatetime | None = None
    updated_at: UtcDatetime | None = None


class FeedbackRate(_Model):
    """Votes on answers that retrieved one topic (None: answers that retrieved none) in a week."""

    topic_id: str | None
    week: Week
    up: int
    down: int

    @property
    def total(self) -> int:
        """Votes in this bucket."""
        return self.up + self.down


class UploadMessage(_Model):
    """The chat message that shows an upload's progress, and its final outcome once known."""

    source_id: NonEmpty
    channel: NonEmpty
    ts: NonEmpty
    name: str = ""
    final: bool = False
    outcome: dict[str, Any] | None = None
    created_at: UtcDatetime | None = None
    updated_at: UtcDatetime | None = None


class MergeProgress(_Model):
    """A source's running merge counts (zeros before the first chunk is merged)."""

    source_id: NonEmpty
    topics_added: int = 0
    topics_updated: int = 0
    relations_added: int = 0
    relations_dropped: int = 0
    changed_ids: list[str] = Field(default_factory=list)
    updated_at: UtcDatetime | None = None


class IdempotencyRecord(_Model):
    """What handling one request (by key, within a scope) produced; forgotten after expiry."""

    scope: NonEmpty
    key: NonEmpty
    value: dict[str, Any] = Field(default_factory=dict)
    created_at: UtcDatetime
    expires_at: UtcDatetime


class CustomTopic(_Model):
    """A learning topic a user asked for that is not (yet) in the knowledge graph."""

    id: TopicId
    label: NonEmpty = Field(max_length=200)
    description: str = ""
    type: TopicType = "concept"
    learning_relevance: LearningRelevance = "standard"
    requested_as: str = ""
    requested_by: str | None = None
    prompt_version: str | None = None
    offline: bool = False
    suggestion_id: str | None = None
    created_at: UtcDatetime | None = None


class Flag(_Model):
    """A named, once-set marker with a small JSON value (e.g. the sample handbook was queued)."""

    name: NonEmpty
    value: dict[str, Any] = Field(default_factory=dict)
    updated_at: UtcDatetime | None = None


class Lease(_Model):
    """Who holds a named lock and until when."""

    name: NonEmpty
    owner: NonEmpty
    acquired_at: datetime
    expires_at: datetime
