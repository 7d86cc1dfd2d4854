"""SQLite quiz attempts (one active per user, answers recorded once) and weekly scores."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from typing import Any

from shared.errors import BadInputError, NotFoundError
from shared.store._common import build, normalise_time, utcnow
from shared.store.models_learning import (
    AnswerResult,
    AttemptStatus,
    LeaderboardEntry,
    QuizAttempt,
    Score,
    check_answer,
    check_question,
    rank_leaderboard,
)
from shared.store.sqlite.db import SqliteDb, dumps, to_text

_COLUMNS = (
    "id, user, week, topic_id, question_keys, status, idle_timeout_s, started_at, "
    "last_activity_at, expires_at"
)


def _load_attempt(conn: sqlite3.Connection, attempt_id: str) -> QuizAttempt | None:
    row = conn.execute(
        f"SELECT {_COLUMNS} FROM quiz_attempts WHERE id = ?", (attempt_id,)
    ).fetchone()
    if row is None:
        return None
    answers = {
        index: {"choice": choice, "correct": bool(correct), "points": points, "answered_at": at}
        for index, choice, correct, points, at in conn.execute(
            "SELECT question_index, choice, correct, points, answered_at FROM attempt_answers "
            "WHERE attempt_id = ? ORDER BY question_index",
            (attempt_id,),
        )
    }
    data = dict(zip(_COLUMNS.split(", "), row, strict=True))
    data["question_keys"] = json.loads(data["question_keys"])
    data["answers"] = answers
    return QuizAttempt.model_validate(data)


def add_points(conn: sqlite3.Connection, user: str, week: str, points: int) -> None:
    """Add points to a user's week inside the caller's transaction."""
    conn.execute(
        "INSERT INTO scores (user, week, points, updated_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (user, week) DO UPDATE SET points = points + excluded.points, "
        "updated_at = excluded.updated_at",
        (user, week, points, to_text(utcnow())),
    )


def _expire_user(conn: sqlite3.Connection, user: str, now: str) -> None:
    conn.execute(
        "UPDATE quiz_attempts SET status = 'expired' "
        "WHERE user = ? AND status = 'active' AND expires_at <= ?",
        (user, now),
    )


class SqliteQuizAttempts:
    """QuizAttemptRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def start(self, attempt: QuizAttempt, *, now: datetime | None = None) -> QuizAttempt:
        """The user's active attempt: the given one if none was active, else the existing one."""
        moment = normalise_time(now or utcnow())
        expires = moment + timedelta(seconds=attempt.idle_timeout_s)

        def run(conn: sqlite3.Connection) -> QuizAttempt:
            existing = _load_attempt(conn, attempt.id)
            if existing is not None:  # a redelivered start
                return existing
            _expire_user(conn, attempt.user, to_text(moment) or "")
            active = conn.execute(
                "SELECT id FROM quiz_attempts WHERE user = ? AND status = 'active'",
                (attempt.user,),
            ).fetchone()
            if active is not None:
                found = _load_attempt(conn, active[0])
                assert found is not None
                return found
            conn.execute(
                f"INSERT INTO quiz_attempts ({_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, 'active', ?, ?, ?, ?)",
                (
                    attempt.id,
                    attempt.user,
                    attempt.week,
                    attempt.topic_id,
                    dumps(attempt.question_keys),
                    attempt.idle_timeout_s,
                    to_text(moment),
                    to_text(moment),
                    to_text(expires),
                ),
            )
            started = _load_attempt(conn, attempt.id)
            assert started is not None
            return started

        return await self._db.write(run)

    async def get(self, attempt_id: str) -> QuizAttempt | None:
        """One attempt or None."""
        return await self._db.read(lambda c: _load_attempt(c, attempt_id))

    async def get_active_attempt(
        self, user: str, *, now: datetime | None = None
    ) -> QuizAttempt | None:
        """The user's active, not idle-expired attempt."""
        moment = to_text(now or utcnow())

        def run(conn: sqlite3.Connection) -> QuizAttempt | None:
            row = conn.execute(
                "SELECT id FROM quiz_attempts WHERE user = ? AND status = 'active' "
                "AND expires_at > ?",
                (user, moment),
            ).fetchone()
            return _load_attempt(conn, row[0]) if row else None

        return await self._db.read(run)

    async def record_answer(
        self,
        attempt_id: str,
        question_index: int,
        choice: int,
        *,
        correct: bool,
        points: int,
        now: datetime | None = None,
    ) -> AnswerResult:
        """Record an answer once, add its points to the week's score, finish when complete."""
        check_answer(choice, points)
        moment = normalise_time(now or utcnow())
        at = to_text(moment)

        def run(conn: sqlite3.Connection) -> AnswerResult:
            attempt = _load_attempt(conn, attempt_id)
            if attempt is None:
                raise NotFoundError(f"quiz attempt {attempt_id!r} does not exist")
            check_question(attempt, question_index)
            if question_index in attempt.answers:
                return AnswerResult(accepted=False, reason="already_answered", attempt=attempt)
            if attempt.status != "active" or (attempt.expires_at and attempt.expires_at <= moment):
                _expire_user(conn, attempt.user, at or "")
                current = _load_attempt(conn, attempt_id)
                assert current is not None
                return AnswerResult(accepted=False, reason="not_active", attempt=current)
            # The primary key (attempt_id, question_index) makes a second score impossible
            # even if this check were bypassed.
            conn.execute(
                "INSERT INTO attempt_answers (attempt_id, question_index, choice, correct, points, "
                "answered_at) VALUES (?, ?, ?, ?, ?, ?)",
                (attempt_id, question_index, choice, int(correct), points, at),
            )
            add_points(conn, attempt.user, attempt.week, points)
            done = len(attempt.answers) + 1 == len(attempt.question_keys)
            expires = moment + timedelta(seconds=attempt.idle_timeout_s)
            conn.execute(
                "UPDATE quiz_attempts SET last_activity_at = ?, expires_at = ?, status = ? "
                "WHERE id = ?",
                (at, to_text(expires), "finished" if done else "active", attempt_id),
            )
            current = _load_attempt(conn, attempt_id)
            assert current is not None
            return AnswerResult(accepted=True, reason="ok", attempt=current)

        return await self._db.write(run)

    async def finish(
        self, attempt_id: str, *, status: AttemptStatus = "finished", now: datetime | None = None
    ) -> bool:
        """End an active attempt (compare-and-set from active)."""
        if status not in ("finished", "expired"):
            raise BadInputError(f"an attempt ends as finished or expired, not {status!r}")
        sql = (
            "UPDATE quiz_attempts SET status = ?, last_activity_at = ? "
            "WHERE id = ? AND status = 'active'"
        )
        params = (status, to_text(now or utcnow()), attempt_id)
        return await self._db.write(lambda c: c.execute(sql, params).rowcount > 0)

    async def expire_idle(self, *, now: datetime | None = None) -> list[str]:
        """Mark active attempts past their idle expiry as expired; returns their ids."""
        moment = to_text(now or utcnow())

        def run(conn: sqlite3.Connection) -> list[str]:
            ids = [
                r[0]
                for r in conn.execute(
                    "SELECT id FROM quiz_attempts WHERE status = 'active' AND expires_at <= ? "
                    "ORDER BY id",
                    (moment,),
                )
            ]
            conn.execute(
                "UPDATE quiz_attempts SET status = 'expired' "
                "WHERE status = 'active' AND expires_at <= ?",
                (moment,),
            )
            return ids

        return await self._db.write(run)

    async def list_for_user(self, user: str, *, week: str | None = None) -> list[QuizAttempt]:
        """A user's attempts, newest first."""
        sql = "SELECT id FROM quiz_attempts WHERE user = ?"
        params: list[Any] = [user]
        if week is not None:
            sql += " AND week = ?"
            params.append(week)
        sql += " ORDER BY started_at DESC, id"

        def run(conn: sqlite3.Connection) -> list[QuizAttempt]:
            ids = [r[0] for r in conn.execute(sql, params)]
            return [a for a in (_load_attempt(conn, i) for i in ids) if a is not None]

        return await self._db.read(run)


class SqliteScores:
    """ScoreRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def add_points(self, user: str, week: str, points: int) -> Score:
        """Add points to a user's week (creating the row)."""
        build(Score, user=user, week=week, points=points)

        def run(conn: sqlite3.Connection) -> Score:
            add_points(conn, user, week, points)
            row = conn.execute(
                "SELECT points FROM scores WHERE user = ? AND week = ?", (user, week)
            ).fetchone()
            return Score(user=user, week=week, points=row[0])

        return await self._db.write(run)

    async def get(self, user: str, week: str) -> Score | None:
        """A user's score in a week."""
        sql = "SELECT points FROM scores WHERE user = ? AND week = ?"
        row = await self._db.read(lambda c: c.execute(sql, (user, week)).fetchone())
        return Score(user=user, week=week, points=row[0]) if row else None

    async def leaderboard(
        self, *, week: str | None = None, limit: int = 10
    ) -> list[LeaderboardEntry]:
        """Top users for a week (or all time), points desc then user."""
        if week is None:
            sql = (
                "SELECT user, sum(points) AS total FROM scores GROUP BY user "
                "ORDER BY total DESC, user LIMIT ?"
            )
            params: tuple[Any, ...] = (limit,)
        else:
            sql = (
                "SELECT user, points FROM scores WHERE week = ? ORDER BY points DESC, user LIMIT ?"
            )
            params = (week, limit)
        rows = await self._db.read(lambda c: c.execute(sql, params).fetchall())
        return rank_leaderboard(rows)
