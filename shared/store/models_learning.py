"""Domain models of learning content, quizzes, scores, chat threads and LLM call telemetry."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shared.errors import BadInputError
from shared.store._common import NonEmpty, TopicId, UtcDatetime, Week, normalise_question_key
from shared.store.models_telemetry import LLMCallRecord

ContentKind = Literal["article", "slides", "infographic"]
Difficulty = Literal["easy", "medium", "hard"]
AttemptStatus = Literal["active", "finished", "expired"]
MessageRole = Literal["user", "assistant"]

CONTENT_KINDS: tuple[str, ...] = ("article", "slides", "infographic")
THREAD_MAX_MESSAGES = 50


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Content(_Model):
    """Generated micro-learning for one topic; each part is a JSON document."""

    topic_id: TopicId
    article: dict[str, Any] | None = None
    slides: dict[str, Any] | None = None
    infographic: dict[str, Any] | None = None
    prompt_version: str | None = None
    stale: bool = False
    generated_at: UtcDatetime | None = None
    topic_fingerprint: str | None = None


class QuizQuestion(_Model):
    """One multiple-choice question; `key` (normalised text) identifies it within its bank."""

    key: str = ""
    text: NonEmpty
    options: list[NonEmpty] = Field(min_length=2, max_length=8)
    correct_index: int = Field(ge=0)
    explanation: str = ""
    # Legacy questions carry no difficulty; they read as medium.
    difficulty: Difficulty = "medium"
    prompt_version: str | None = None

    @model_validator(mode="after")
    def _check(self) -> QuizQuestion:
        if self.correct_index >= len(self.options):
            raise ValueError(
                f"correct_index {self.correct_index} is out of range "
                f"for {len(self.options)} options"
            )
        if not self.key:
            self.key = normalise_question_key(self.text)
        if not self.key:
            raise ValueError("question text has no letters or digits to build a key from")
        return self


class QuizBank(_Model):
    """All questions generated for one topic."""

    topic_id: TopicId
    questions: list[QuizQuestion] = Field(default_factory=list)
    updated_at: UtcDatetime | None = None


class AttemptAnswer(_Model):
    """The answer given to one question of an attempt (recorded once, never overwritten)."""

    choice: int = Field(ge=0)
    correct: bool
    points: int = Field(ge=0)
    answered_at: UtcDatetime


class QuizAttempt(_Model):
    """One user's run through a week's quiz; while active, R42 does not answer the user."""

    id: NonEmpty
    user: NonEmpty
    week: Week
    topic_id: TopicId | None = None
    question_keys: list[NonEmpty] = Field(min_length=1)
    answers: dict[int, AttemptAnswer] = Field(default_factory=dict)
    status: AttemptStatus = "active"
    idle_timeout_s: float = Field(default=900.0, gt=0)
    started_at: UtcDatetime | None = None
    last_activity_at: UtcDatetime | None = None
    expires_at: UtcDatetime | None = None


def check_answer(choice: int, points: int) -> None:
    """BadInputError for a negative choice or negative points."""
    if choice < 0 or points < 0:
        raise BadInputError("choice and points must not be negative")


def check_question(attempt: QuizAttempt, question_index: int) -> None:
    """BadInputError when the attempt has no question at that index."""
    if not 0 <= question_index < len(attempt.question_keys):
        raise BadInputError(
            f"question {question_index} is not in attempt {attempt.id!r} "
            f"({len(attempt.question_keys)} questions)"
        )


class AnswerResult(_Model):
    """Outcome of recording an answer; `accepted` is False for a repeat or an inactive attempt."""

    accepted: bool
    reason: Literal["ok", "already_answered", "not_active"]
    attempt: QuizAttempt


class Score(_Model):
    """A user's points in one ISO week."""

    user: NonEmpty
    week: Week
    points: int = 0


class LeaderboardEntry(_Model):
    """One leaderboard row; equal points share a rank (1, 1, 3)."""

    rank: int
    user: str
    points: int


def rank_leaderboard(rows: list[tuple[str, int]]) -> list[LeaderboardEntry]:
    """Competition ranking over rows sorted by points desc: equal points share a rank."""
    entries: list[LeaderboardEntry] = []
    for position, (user, points) in enumerate(rows, start=1):
        rank = entries[-1].rank if entries and entries[-1].points == points else position
        entries.append(LeaderboardEntry(rank=rank, user=user, points=int(points)))
    return entries


class ThreadMessage(_Model):
    """One turn of a user's conversation with R42."""

    role: MessageRole
    text: str
    at: UtcDatetime


class CurriculumEntry(_Model):
    """The topic scheduled for one ISO week."""

    week: Week
    topic_id: TopicId


class LlmCall(LLMCallRecord):
    """A stored LLM call record with its id (the event id when it came from the bus)."""

    id: NonEmpty


class CallAggregate(_Model):
    """Totals of LLM calls grouped by task or model."""

    key: str
    calls: int
    errors: int
    input_tokens: int
    output_tokens: int
    cache_creation_input_tokens: int
    cache_read_input_tokens: int
    cost_usd: float
    duration_ms_total: float
