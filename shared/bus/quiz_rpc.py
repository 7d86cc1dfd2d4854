"""Request/reply contracts of the quiz service (`rpc.quiz.status`, `.leaderboard`, `.stop`, …).

The quiz service owns the week's topic, the quiz-active flag, the leaderboard and ending an
attempt; every surface asks it instead of re-deriving them or writing the store itself.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

QUIZ_STATUS_SUBJECT = "rpc.quiz.status"
"""A user's week: QuizStatusRequest → QuizStatusReply."""
LEADERBOARD_SUBJECT = "rpc.quiz.leaderboard"
"""The weekly and all-time top: LeaderboardRequest → LeaderboardReply."""
QUIZ_STOP_SUBJECT = "rpc.quiz.stop"
"""A user abandons the running quiz: QuizStopRequest → QuizStopReply."""

_WEEK = r"^\d{4}-W(0[1-9]|[1-4]\d|5[0-3])$"


class QuizStatusRequest(BaseModel):
    """Whose week, and which (default: the current ISO week)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user_id: str = Field(min_length=1, max_length=200)
    week: str | None = Field(default=None, pattern=_WEEK)


class QuizStatusReply(BaseModel):
    """The user's topic of the week (None when the graph has none) and the quiz-active flag."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    week: str
    quiz_active: bool
    topic_id: str | None = None
    topic_label: str = ""


class LeaderboardRequest(BaseModel):
    """How many rows, for which week (default: the current ISO week)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    limit: int = Field(default=10, ge=1, le=1000)
    week: str | None = Field(default=None, pattern=_WEEK)


class LeaderboardRow(BaseModel):
    """One row; equal points share a rank (1, 1, 3)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rank: int = Field(ge=1)
    user: str
    points: int


class LeaderboardReply(BaseModel):
    """The week's and the all-time leaderboard."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    week: str
    weekly: list[LeaderboardRow] = Field(default_factory=list)
    all_time: list[LeaderboardRow] = Field(default_factory=list)


class QuizStopRequest(BaseModel):
    """Whose running quiz to end (the user's own: the surface sets the id it verified)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user_id: str = Field(min_length=1, max_length=200)


class QuizStopReply(BaseModel):
    """Whether a running quiz was ended (answered questions keep their points)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stopped: bool
    attempt_id: str | None = None


QUIZ_BANK_SUBJECT = "rpc.quiz.bank_regenerate"
"""An admin replaces a topic's bank (as `r42 quiz bank regenerate` does)."""


class BankRegenerateRequest(BaseModel):
    """Whose request (checked against the quiz service's own admin list) and which topic."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    user_id: str = Field(min_length=1, max_length=200)
    topic_id: str = Field(min_length=1, max_length=200)
    count: int = Field(default=10, ge=1, le=20)


class BankRegenerateReply(BaseModel):
    """The outcome: a new bank, a batch the quality gate refused (why), or a refusal."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: Literal["ok", "rejected", "forbidden", "not_found"]
    added: int = 0
    removed: int = 0
    size: int = 0
    reason: str = Field(default="", max_length=2000)
