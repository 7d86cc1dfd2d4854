"""One pydantic model per bus subject (docs/ARCHITECTURE.md, Events)."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import Field, NonNegativeFloat, NonNegativeInt, field_validator, model_validator

from shared.bus.envelope import Event, Payload
from shared.bus.subjects import FAILED_PREFIX, validate_subject
from shared.errors import BadInputError
from shared.llm.telemetry import LLMCallRecord

TopicType = Literal["concept", "role", "process"]
RelationType = Literal["related_to", "depends_on", "part_of", "executed_by"]
# Model output may still say `executes`; the merge step normalises it to executed_by.
ExtractedRelationType = RelationType | Literal["executes"]
ContentType = Literal["article", "slides", "infographic", "all"]
Decision = Literal["approved", "rejected"]

Id = Annotated[str, Field(min_length=1, max_length=200)]
ErrorText = Annotated[str, Field(min_length=1, max_length=4000)]
Week = Annotated[
    str, Field(pattern=r"^\d{4}-W(0[1-9]|[1-4]\d|5[0-3])$", description="ISO week, YYYY-Www")
]
ReplyTo = Annotated[
    dict[str, Any],
    Field(default_factory=dict, description="Opaque routing data the gateway uses to answer."),
]


# -- shared payload pieces ---------------------------------------------------------------


class Topic(Payload):
    """A knowledge-graph topic as carried on the bus."""

    id: Id
    label: str = Field(min_length=1, max_length=300)
    type: TopicType
    description: str = Field(default="", max_length=8000)
    learning_relevance: str = Field(default="", max_length=2000)


class Relation(Payload):
    """A typed, directed relation between two topic ids."""

    source: Id
    target: Id
    type: RelationType
    description: str | None = Field(default=None, max_length=4000)


class ExtractedRelation(Relation):
    """A relation straight from model output: also accepts the legacy `executes`."""

    type: ExtractedRelationType  # type: ignore[assignment]


class KbDelta(Payload):
    """A validated change set for the knowledge graph."""

    reason: str = Field(min_length=1, max_length=4000)
    topics: list[Topic] = Field(default_factory=list)
    relations: list[Relation] = Field(default_factory=list)


# -- sources ------------------------------------------------------------------------------


class SourceUploaded(Event):
    """A source's text is stored and ready for extraction."""

    SUBJECT: ClassVar[str] = "source.uploaded"

    source_id: Id
    name: str = Field(min_length=1, max_length=500)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256 (hex) of the object")
    text_ref: str = Field(
        min_length=1, max_length=500,
        description="Name of the object holding the file in the JetStream object store "
        "bucket r42-sources (put it there first). The extractor reads it once, when it "
        "registers the source, keeps the text and deletes the object",
    )  # fmt: skip
    size: NonNegativeInt = Field(description="Size of that object in bytes")
    uploaded_by: Id


class SourceCancelled(Event):
    """Stop extracting a source."""

    SUBJECT: ClassVar[str] = "source.cancelled"

    source_id: Id


class SourceProgress(Event):
    """Extraction progress of one source (running counts)."""

    SUBJECT: ClassVar[str] = "source.progress"

    source_id: Id
    chunks_done: NonNegativeInt
    chunks_total: NonNegativeInt
    topics_added: NonNegativeInt = 0
    topics_updated: NonNegativeInt = 0
    relations_added: NonNegativeInt = 0
    relations_dropped: NonNegativeInt = 0

    @model_validator(mode="after")
    def _chunks(self) -> Self:
        if self.chunks_done > self.chunks_total:
            raise ValueError(
                f"chunks_done ({self.chunks_done}) exceeds chunks_total ({self.chunks_total})"
            )
        return self


class SourceCompleted(SourceProgress):
    """Extraction of a source finished."""

    SUBJECT: ClassVar[str] = "source.completed"

    duration: NonNegativeFloat = Field(description="Seconds from upload to completion")


class SourceFailed(Event):
    """Extraction of a source failed for good."""

    SUBJECT: ClassVar[str] = "source.failed"

    source_id: Id
    error: ErrorText


# -- extraction and knowledge graph ---------------------------------------------------------


class ChunkExtracted(Event):
    """Topics and relations the LLM step extracted from one chunk."""

    SUBJECT: ClassVar[str] = "chunk.extracted"

    source_id: Id
    chunk_index: NonNegativeInt
    chunk_count: int = Field(ge=1)
    topics: list[Topic] = Field(default_factory=list)
    relations: list[ExtractedRelation] = Field(default_factory=list)
    prompt_version: str = Field(min_length=1, max_length=100)

    @model_validator(mode="after")
    def _index(self) -> Self:
        if self.chunk_index >= self.chunk_count:
            raise ValueError(f"chunk_index ({self.chunk_index}) must be < chunk_count")
        return self


class KbDeltaProposed(Event):
    """Someone (R42 or an admin) proposes a knowledge-graph change."""

    SUBJECT: ClassVar[str] = "kb.delta.proposed"

    suggestion_id: Id
    delta: KbDelta
    proposed_by: Id


class KbDeltaDecided(Event):
    """An admin approved or rejected a proposed change."""

    SUBJECT: ClassVar[str] = "kb.delta.decided"

    suggestion_id: Id
    decision: Decision
    decided_by: Id
    delta: KbDelta


class KbDeltaApplied(Event):
    """The KG owner's outcome of a decision: applied, nothing new, rejected, or failed (why)."""

    SUBJECT: ClassVar[str] = "kb.delta.applied"

    suggestion_id: Id
    decision: Decision
    decided_by: Id
    proposed_by: str = Field(default="", max_length=200)  # "" when the owner could not read it
    outcome: Literal["applied", "nothing_to_apply", "rejected", "failed"]
    topics: NonNegativeInt = 0
    relations: NonNegativeInt = 0
    error: str = Field(default="", max_length=4000)


class KbUpdated(Event):
    """The knowledge graph changed (published by its one writer)."""

    SUBJECT: ClassVar[str] = "kb.updated"

    kb_hash: str = Field(min_length=1, max_length=128)
    changed_ids: list[str] = Field(default_factory=list)
    # Topics gone from the graph (their last source was deleted or no longer says them).
    removed_ids: list[str] = Field(default_factory=list)
    reason: str = Field(min_length=1, max_length=500)


# -- content and quiz ---------------------------------------------------------------------


class ContentRequested(Event):
    """A user asked for micro-learning content on a topic."""

    SUBJECT: ClassVar[str] = "content.requested"

    user_id: Id
    topic_id: Id
    content_type: ContentType
    force: bool = False
    reply_to: ReplyTo


class ContentReady(Event):
    """Requested content is ready (or could not be made)."""

    SUBJECT: ClassVar[str] = "content.ready"

    topic_id: Id
    content_type: ContentType
    ok: bool
    error: str | None = Field(default=None, max_length=4000)
    content_ref: str | None = Field(default=None, max_length=500)
    reply_to: ReplyTo


class QuizRequested(Event):
    """A user asked for the week's quiz."""

    SUBJECT: ClassVar[str] = "quiz.requested"

    user_id: Id
    week: Week
    reply_to: ReplyTo


class QuizReady(Event):
    """A quiz attempt was started (with its first question) or could not be."""

    SUBJECT: ClassVar[str] = "quiz.ready"

    user_id: Id
    week: Week
    attempt_id: str | None = Field(default=None, max_length=200)
    ok: bool
    error: str | None = Field(default=None, max_length=4000)
    question: dict[str, Any] | None = Field(default=None, description="First question")
    reply_to: ReplyTo


class QuizAnswered(Event):
    """A user answered one quiz question."""

    SUBJECT: ClassVar[str] = "quiz.answered"

    attempt_id: Id
    user_id: Id
    question_index: NonNegativeInt
    choice_index: NonNegativeInt
    reply_to: ReplyTo


class QuizScored(Event):
    """An answer was scored: right or wrong, the explanation, and the next question or the end."""

    SUBJECT: ClassVar[str] = "quiz.scored"

    attempt_id: Id
    user_id: Id
    week: Week
    question_index: NonNegativeInt
    question_count: NonNegativeInt
    correct: bool
    correct_index: NonNegativeInt
    explanation: str = Field(default="", max_length=4000)
    duplicate: bool = Field(default=False, description="The answer was already scored before")
    next_question: dict[str, Any] | None = None
    finished: bool = False
    score: NonNegativeInt = 0
    error: str | None = Field(
        default=None, max_length=4000, description="Why the answer could not be scored"
    )
    reply_to: ReplyTo


# -- operations -----------------------------------------------------------------------------


class LLMCallLogged(Event):
    """One LLM call, successful or not."""

    SUBJECT: ClassVar[str] = "llm.call.logged"

    record: LLMCallRecord


class DeadLetter(Event):
    """A message a consumer gave up on; published on `failed.<original subject>`."""

    SUBJECT: ClassVar[str] = f"{FAILED_PREFIX}>"

    original_subject: str = Field(min_length=1, max_length=300)
    original_event_id: str | None = Field(default=None, max_length=200)
    error: ErrorText
    deliveries: int = Field(ge=1)
    consumer: str = Field(default="", max_length=200)
    stream: str = Field(default="", max_length=200)
    stream_seq: NonNegativeInt | None = None

    @field_validator("original_subject")
    @classmethod
    def _concrete(cls, value: str) -> str:
        try:
            validate_subject(value)
        except BadInputError as exc:
            raise ValueError(str(exc)) from None
        if value.startswith(FAILED_PREFIX):
            raise ValueError("a dead letter is never dead-lettered again")
        return value

    @property
    def subject(self) -> str:
        """The concrete subject this dead letter is published on."""
        return f"{FAILED_PREFIX}{self.original_subject}"


EVENT_MODELS: tuple[type[Event], ...] = (
    SourceUploaded,
    SourceCancelled,
    SourceProgress,
    SourceCompleted,
    SourceFailed,
    ChunkExtracted,
    KbDeltaProposed,
    KbDeltaDecided,
    KbDeltaApplied,
    KbUpdated,
    ContentRequested,
    ContentReady,
    QuizRequested,
    QuizReady,
    QuizAnswered,
    QuizScored,
    LLMCallLogged,
)
"""Every model with a fixed subject (DeadLetter's subject is derived per message)."""
