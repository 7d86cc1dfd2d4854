"""MongoDB quiz attempts and weekly scores.

Answer-once is a compare-and-set on `answers.<i>` not existing; on a replica set the
answer and the score increment share a transaction, otherwise the answer is written
first, so a crash between them can lose those points but never count them twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from pymongo import ReturnDocument

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
from shared.store.mongo.client import DuplicateKeyError, MongoDb, Session, mongo_errors
from shared.store.mongo.queries import all_time_leaderboard, score_id


def attempt_doc(attempt: QuizAttempt) -> dict[str, Any]:
    """The document of an attempt (answers keyed by the question index as a string)."""
    doc = attempt.model_dump(exclude={"id", "answers"})
    doc["_id"] = attempt.id
    doc["answers"] = {str(i): a.model_dump() for i, a in attempt.answers.items()}
    return doc


def attempt_from_doc(doc: Mapping[str, Any]) -> QuizAttempt:
    """An attempt from its document."""
    data = {k: v for k, v in doc.items() if k != "_id"}
    data["answers"] = {int(i): a for i, a in (doc.get("answers") or {}).items()}
    return QuizAttempt.model_validate({"id": doc["_id"], **data})


@mongo_errors
class MongoQuizAttempts:
    """QuizAttemptRepository on MongoDB (a partial unique index keeps one active per user)."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def start(self, attempt: QuizAttempt, *, now: datetime | None = None) -> QuizAttempt:
        """The user's active attempt: the given one if none was active, else the existing one."""
        attempts = self._db["quiz_attempts"]
        moment = normalise_time(now or utcnow())
        for _ in range(3):
            existing = await attempts.find_one({"_id": attempt.id})
            if existing is not None:
                return attempt_from_doc(existing)
            await attempts.update_many(
                {"user": attempt.user, "status": "active", "expires_at": {"$lte": moment}},
                {"$set": {"status": "expired"}},
            )
            active = await attempts.find_one({"user": attempt.user, "status": "active"})
            if active is not None:
                return attempt_from_doc(active)
            fresh = attempt.model_copy(
                update={
                    "status": "active",
                    "answers": {},
                    "started_at": moment,
                    "last_activity_at": moment,
                    "expires_at": moment + timedelta(seconds=attempt.idle_timeout_s),
                }
            )
            try:
                await attempts.insert_one(attempt_doc(fresh))
                return fresh
            except DuplicateKeyError:
                continue  # another start won the race; read what it stored
        raise BadInputError(f"could not start a quiz for {attempt.user!r}: concurrent starts")

    async def get(self, attempt_id: str) -> QuizAttempt | None:
        """One attempt or None."""
        doc = await self._db["quiz_attempts"].find_one({"_id": attempt_id})
        return attempt_from_doc(doc) if doc else None

    async def get_active_attempt(
        self, user: str, *, now: datetime | None = None
    ) -> QuizAttempt | None:
        """The user's active, not idle-expired attempt."""
        doc = await self._db["quiz_attempts"].find_one(
            {
                "user": user,
                "status": "active",
                "expires_at": {"$gt": normalise_time(now or utcnow())},
            }
        )
        return attempt_from_doc(doc) if doc else None

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
        attempt = await self.get(attempt_id)
        if attempt is None:
            raise NotFoundError(f"quiz attempt {attempt_id!r} does not exist")
        check_question(attempt, question_index)

        async def body(session: Session) -> AnswerResult:
            answer = {"choice": choice, "correct": correct, "points": points, "answered_at": moment}
            doc = await self._db["quiz_attempts"].find_one_and_update(
                {
                    "_id": attempt_id,
                    "status": "active",
                    "expires_at": {"$gt": moment},
                    f"answers.{question_index}": {"$exists": False},
                },
                {
                    "$set": {
                        f"answers.{question_index}": answer,
                        "last_activity_at": moment,
                        "expires_at": moment + timedelta(seconds=attempt.idle_timeout_s),
                    }
                },
                return_document=ReturnDocument.AFTER,
                session=session,
            )
            if doc is None:
                return await self._refused(attempt_id, question_index, moment, session)
            await _add_points(self._db, attempt.user, attempt.week, points, session)
            current = attempt_from_doc(doc)
            if len(current.answers) == len(current.question_keys):
                await self._db["quiz_attempts"].update_one(
                    {"_id": attempt_id, "status": "active"},
                    {"$set": {"status": "finished"}},
                    session=session,
                )
                current = current.model_copy(update={"status": "finished"})
            return AnswerResult(accepted=True, reason="ok", attempt=current)

        return await self._db.atomic(body)

    async def _refused(
        self, attempt_id: str, index: int, moment: datetime, session: Session
    ) -> AnswerResult:
        attempts = self._db["quiz_attempts"]
        doc = await attempts.find_one({"_id": attempt_id}, session=session)
        current = attempt_from_doc(doc) if doc else None
        if current is None:
            raise NotFoundError(f"quiz attempt {attempt_id!r} does not exist")
        if index in current.answers:
            return AnswerResult(accepted=False, reason="already_answered", attempt=current)
        if current.status == "active" and current.expires_at and current.expires_at <= moment:
            await attempts.update_one(
                {"_id": attempt_id, "status": "active"},
                {"$set": {"status": "expired"}},
                session=session,
            )
            current = current.model_copy(update={"status": "expired"})
        return AnswerResult(accepted=False, reason="not_active", attempt=current)

    async def finish(
        self, attempt_id: str, *, status: AttemptStatus = "finished", now: datetime | None = None
    ) -> bool:
        """End an active attempt (compare-and-set from active)."""
        if status not in ("finished", "expired"):
            raise BadInputError(f"an attempt ends as finished or expired, not {status!r}")
        result = await self._db["quiz_attempts"].update_one(
            {"_id": attempt_id, "status": "active"},
            {"$set": {"status": status, "last_activity_at": normalise_time(now or utcnow())}},
        )
        return result.modified_count > 0

    async def expire_idle(self, *, now: datetime | None = None) -> list[str]:
        """Mark active attempts past their idle expiry as expired; returns their ids."""
        attempts = self._db["quiz_attempts"]
        query = {"status": "active", "expires_at": {"$lte": normalise_time(now or utcnow())}}
        ids = sorted([d["_id"] async for d in attempts.find(query, {"_id": 1})])
        if ids:
            await attempts.update_many(
                {"_id": {"$in": ids}, "status": "active"}, {"$set": {"status": "expired"}}
            )
        return ids

    async def list_for_user(self, user: str, *, week: str | None = None) -> list[QuizAttempt]:
        """A user's attempts, newest first."""
        query = {"user": user} if week is None else {"user": user, "week": week}
        cursor = self._db["quiz_attempts"].find(query).sort([("started_at", -1), ("_id", 1)])
        return [attempt_from_doc(d) async for d in cursor]


async def _add_points(db: MongoDb, user: str, week: str, points: int, session: Session) -> int:
    doc = await db["scores"].find_one_and_update(
        {"_id": score_id(user, week)},
        {"$inc": {"points": points}, "$set": {"user": user, "week": week, "updated_at": utcnow()}},
        upsert=True,
        return_document=ReturnDocument.AFTER,
        session=session,
    )
    assert doc is not None  # an upsert returning AFTER always has the document
    return int(doc["points"])


@mongo_errors
class MongoScores:
    """ScoreRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def add_points(self, user: str, week: str, points: int) -> Score:
        """Add points to a user's week (creating the row)."""
        build(Score, user=user, week=week, points=points)
        total = await _add_points(self._db, user, week, points, None)
        return Score(user=user, week=week, points=total)

    async def get(self, user: str, week: str) -> Score | None:
        """A user's score in a week."""
        doc = await self._db["scores"].find_one({"_id": score_id(user, week)})
        return Score(user=user, week=week, points=doc["points"]) if doc else None

    async def leaderboard(
        self, *, week: str | None = None, limit: int = 10
    ) -> list[LeaderboardEntry]:
        """Top users for a week (or all time), points desc then user."""
        scores = self._db["scores"]
        if week is None:
            totals = await scores.aggregate(all_time_leaderboard(limit))
            rows = [(d["_id"], d["points"]) async for d in totals]
        else:
            weekly = scores.find({"week": week}).sort([("points", -1), ("user", 1)]).limit(limit)
            rows = [(d["user"], d["points"]) async for d in weekly]
        return rank_leaderboard(rows)
