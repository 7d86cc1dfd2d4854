"""What the gateway client returns: small views shared by the Slack app and the console."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from services.gateway.core.insights import FeedbackReport
from shared.bus import SourceCompleted, SourceFailed, SourceProgress
from shared.store import (
    AuditEntry,
    CallAggregate,
    LeaderboardEntry,
    LlmCall,
    QuizAttempt,
    Source,
    Suggestion,
    Topic,
)

ProgressState = Literal["running", "completed", "failed", "cancelled"]


@dataclass(frozen=True)
class Progress:
    """Where the extraction of one source stands."""

    state: ProgressState
    chunks_done: int = 0
    chunks_total: int = 0
    topics_added: int = 0
    topics_updated: int = 0
    relations_added: int = 0
    error: str | None = None

    @classmethod
    def of(cls, event: SourceProgress | SourceFailed) -> Progress:
        """The progress an extractor event reports."""
        if isinstance(event, SourceFailed):
            state: ProgressState = "cancelled" if "cancel" in event.error.lower() else "failed"
            return cls(state=state, error=event.error)
        return cls(
            state="completed" if isinstance(event, SourceCompleted) else "running",
            chunks_done=event.chunks_done,
            chunks_total=event.chunks_total,
            topics_added=event.topics_added,
            topics_updated=event.topics_updated,
            relations_added=event.relations_added,
        )

    @property
    def final(self) -> bool:
        """Whether nothing more will be reported."""
        return self.state != "running"


@dataclass(frozen=True)
class WeeklyTopic:
    """This week's topic of a user."""

    week: str
    topic_id: str
    label: str


@dataclass(frozen=True)
class Leaderboards:
    """The weekly and all-time rankings."""

    week: str
    weekly: list[LeaderboardEntry]
    all_time: list[LeaderboardEntry]


@dataclass(frozen=True)
class IngestResult:
    """A stored, announced source, or the earlier identical one it duplicates."""

    source: Source
    duplicate: bool = False


@dataclass(frozen=True)
class SuggestionDecision:
    """What an Approve / Reject click did."""

    status: Literal["decided", "already_decided", "not_found", "forbidden"]
    suggestion: Suggestion | None = None
    decision: str | None = None
    """approved / rejected when known (unknown when a concurrent click won)."""
    decided_by: str | None = None

    @property
    def approved(self) -> bool:
        """Whether the decision is an approval."""
        return self.decision == "approved"


@dataclass(frozen=True)
class Diagnostics:
    """Recent LLM calls and this week's totals."""

    recent: list[LlmCall]
    by_task: list[CallAggregate]
    week_calls: int
    week_errors: int
    week_cost_usd: float
    total_calls: int


@dataclass(frozen=True)
class GraphView:
    """A topic and its neighbours: (relation type, outgoing?, neighbour)."""

    topic: Topic
    neighbours: list[tuple[str, bool, Topic]] = field(default_factory=list)


@dataclass(frozen=True)
class HomeData:
    """Everything App Home shows; admin parts are None for other users."""

    weekly: WeeklyTopic | None
    attempt: QuizAttempt | None
    week_points: int
    leaderboards: Leaderboards
    pending: list[Suggestion] | None = None
    running: list[Source] | None = None
    week_cost_usd: float | None = None
    audit: list[AuditEntry] | None = None
    feedback: FeedbackReport | None = None
