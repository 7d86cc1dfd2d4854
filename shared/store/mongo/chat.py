"""MongoDB proposals, feedback votes and upload progress messages."""

from __future__ import annotations

import builtins
import uuid
from datetime import datetime
from typing import Any

from pymongo import ReturnDocument

from shared.store._common import need, normalise_time, utcnow
from shared.store.models_state import (
    ChatProposal,
    DecidedStatus,
    FeedbackRate,
    FeedbackValue,
    FeedbackVote,
    ProposalStatus,
    UploadMessage,
    check_decided,
)
from shared.store.mongo.client import MongoDb, mongo_errors, upserted
from shared.store.mongo.state_docs import (
    proposal_doc,
    proposal_from_doc,
    upload_doc,
    upload_from_doc,
    vote_doc,
    vote_from_doc,
    vote_id,
)


@mongo_errors
class MongoProposals:
    """ProposalRepository on MongoDB; decisions are find_one_and_update on status open."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def create(self, proposal: ChatProposal) -> ChatProposal:
        """Store an open proposal (an existing id returns the stored one unchanged)."""
        doc = proposal_doc(proposal)
        stored = await self._db["proposals"].find_one_and_update(
            {"_id": doc.pop("_id")},
            {"$setOnInsert": doc},
            upsert=True,
            return_document=ReturnDocument.AFTER,
        )
        return proposal_from_doc(upserted(stored))

    async def get(self, proposal_id: str) -> ChatProposal | None:
        """One proposal or None."""
        doc = await self._db["proposals"].find_one({"_id": proposal_id})
        return proposal_from_doc(doc) if doc else None

    async def list(
        self, *, status: ProposalStatus | None = None, limit: int = 100
    ) -> builtins.list[ChatProposal]:
        """Proposals, newest first."""
        query = {"status": status} if status else {}
        cursor = self._db["proposals"].find(query).sort([("created_at", -1), ("_id", 1)])
        return [proposal_from_doc(d) async for d in cursor.limit(max(limit, 0))]

    async def decide(
        self,
        proposal_id: str,
        *,
        status: DecidedStatus,
        by: str,
        suggestion_id: str | None = None,
        now: datetime | None = None,
    ) -> ChatProposal | None:
        """Move an open proposal to status (compare-and-set); None if missing or decided."""
        need(by, "a decision needs the deciding user's id")
        check_decided(status)
        decided = {
            "status": status,
            "decided_by": by,
            "decided_at": normalise_time(now or utcnow()),
            "suggestion_id": suggestion_id,
            "decision_token": uuid.uuid4().hex,
        }
        doc = await self._db["proposals"].find_one_and_update(
            {"_id": proposal_id, "status": "open"},
            {"$set": decided},
            return_document=ReturnDocument.AFTER,
        )
        return proposal_from_doc(doc) if doc else None

    async def reopen(self, proposal_id: str, *, decision_token: str) -> bool:
        """Undo the decision holding this token; False if the proposal moved on."""
        need(decision_token, "reopening needs the decision token")
        cleared = dict.fromkeys(("decided_by", "decided_at", "suggestion_id", "decision_token"))
        result = await self._db["proposals"].update_one(
            {"_id": proposal_id, "decision_token": decision_token},
            {"$set": {"status": "open", **cleared}},
        )
        return result.matched_count > 0


@mongo_errors
class MongoFeedback:
    """FeedbackRepository on MongoDB; rates are one $unwind / $group pipeline."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def record(self, vote: FeedbackVote, *, now: datetime | None = None) -> FeedbackVote:
        """Store or replace the user's vote on a turn (created_at kept, updated_at set)."""
        moment = normalise_time(now or utcnow())
        doc = vote_doc(vote.model_copy(update={"created_at": vote.created_at or moment}))
        key = doc.pop("_id")
        first = {"created_at": doc.pop("created_at"), "week": doc.pop("week")}
        doc["updated_at"] = moment
        stored = await self._db["feedback"].find_one_and_update(
            {"_id": key},
            {"$set": doc, "$setOnInsert": first},
            upsert=True,
            return_document=ReturnDocument.AFTER,
        )
        return vote_from_doc(upserted(stored))

    async def get(self, turn_id: str, user: str) -> FeedbackVote | None:
        """One user's vote on one turn."""
        doc = await self._db["feedback"].find_one({"_id": vote_id(turn_id, user)})
        return vote_from_doc(doc) if doc else None

    async def list(
        self,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        value: FeedbackValue | None = None,
        limit: int = 100,
    ) -> builtins.list[FeedbackVote]:
        """Votes cast in [since, until), newest first (optionally only up or down)."""
        query: dict[str, Any] = _window(since, until)
        if value is not None:
            query["value"] = value
        order = [("created_at", -1), ("turn_id", 1), ("user", 1)]
        cursor = self._db["feedback"].find(query).sort(order).limit(max(limit, 0))
        return [vote_from_doc(d) async for d in cursor]

    async def rates(
        self, *, since: datetime | None = None, until: datetime | None = None
    ) -> builtins.list[FeedbackRate]:
        """Up / down per retrieved topic and ISO week, by week then topic (None first)."""
        pipeline: builtins.list[dict[str, Any]] = [
            {"$match": _window(since, until)},
            {
                "$project": {
                    "week": 1,
                    "value": 1,
                    "topic": {
                        "$cond": [{"$eq": [{"$size": "$topic_ids"}, 0]}, [None], "$topic_ids"]
                    },
                }
            },
            {"$unwind": "$topic"},
            {
                "$group": {
                    "_id": {"topic": "$topic", "week": "$week"},
                    "up": {"$sum": {"$cond": [{"$eq": ["$value", "up"]}, 1, 0]}},
                    "down": {"$sum": {"$cond": [{"$eq": ["$value", "down"]}, 1, 0]}},
                }
            },
        ]
        cursor = await self._db["feedback"].aggregate(pipeline)
        rates = [
            FeedbackRate(
                topic_id=d["_id"]["topic"], week=d["_id"]["week"], up=d["up"], down=d["down"]
            )
            async for d in cursor
        ]
        return sorted(rates, key=lambda r: (r.week, r.topic_id is not None, r.topic_id or ""))


def _window(since: datetime | None, until: datetime | None) -> dict[str, Any]:
    bounds: dict[str, Any] = {}
    if since is not None:
        bounds["$gte"] = normalise_time(since)
    if until is not None:
        bounds["$lt"] = normalise_time(until)
    return {"created_at": bounds} if bounds else {}


@mongo_errors
class MongoUploadMessages:
    """UploadMessageRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def put(self, message: UploadMessage) -> None:
        """Remember (or replace) the progress message of an upload."""
        doc = upload_doc(message)
        await self._db["upload_messages"].replace_one({"_id": doc["_id"]}, doc, upsert=True)

    async def get(self, source_id: str) -> UploadMessage | None:
        """The progress message of a source, or None."""
        doc = await self._db["upload_messages"].find_one({"_id": source_id})
        return upload_from_doc(doc) if doc else None

    async def finish(
        self, source_id: str, outcome: dict[str, Any], *, now: datetime | None = None
    ) -> UploadMessage | None:
        """Mark the upload final with its outcome; None if missing or already final."""
        update = {"final": True, "outcome": outcome, "updated_at": normalise_time(now or utcnow())}
        doc = await self._db["upload_messages"].find_one_and_update(
            {"_id": source_id, "final": False},
            {"$set": update},
            return_document=ReturnDocument.AFTER,
        )
        return upload_from_doc(doc) if doc else None

    async def delete(self, source_id: str) -> bool:
        """Forget a mapping."""
        result = await self._db["upload_messages"].delete_one({"_id": source_id})
        return result.deleted_count > 0
