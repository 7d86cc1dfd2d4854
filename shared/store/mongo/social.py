"""MongoDB chat threads (capped with $slice) and suggestions (decided by compare-and-set)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from pymongo import ReturnDocument

from shared.errors import BadInputError, NotFoundError
from shared.store._common import normalise_time, utcnow
from shared.store.models import Suggestion, SuggestionStatus
from shared.store.models_learning import THREAD_MAX_MESSAGES, ThreadMessage
from shared.store.mongo.client import MongoDb, mongo_errors


def _suggestion(doc: Mapping[str, Any]) -> Suggestion:
    data = {k: v for k, v in doc.items() if k != "_id"}
    return Suggestion.model_validate({"id": doc["_id"], **data})


@mongo_errors
class MongoThreads:
    """ThreadRepository on MongoDB: one document per user, trimmed by the same update."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def append(self, user: str, messages: Iterable[ThreadMessage]) -> None:
        """Append messages, keeping only the newest THREAD_MAX_MESSAGES."""
        if not user:
            raise BadInputError("a thread needs a user id")
        docs = [m.model_dump() for m in messages]
        if not docs:
            return
        await self._db["threads"].update_one(
            {"_id": user},
            {"$push": {"messages": {"$each": docs, "$slice": -THREAD_MAX_MESSAGES}}},
            upsert=True,
        )

    async def get(self, user: str) -> list[ThreadMessage]:
        """A user's messages, oldest first."""
        doc = await self._db["threads"].find_one({"_id": user})
        return [ThreadMessage.model_validate(m) for m in (doc or {}).get("messages", [])]

    async def clear(self, user: str) -> int:
        """Forget a user's history; returns messages removed."""
        doc = await self._db["threads"].find_one_and_delete({"_id": user})
        return len((doc or {}).get("messages", []))


@mongo_errors
class MongoSuggestions:
    """SuggestionRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def create(self, suggestion: Suggestion) -> Suggestion:
        """Store a pending suggestion (an existing id returns the stored one)."""
        doc = suggestion.model_dump(exclude={"id"})
        doc["created_at"] = suggestion.created_at or utcnow()
        stored = await self._db["suggestions"].find_one_and_update(
            {"_id": suggestion.id},
            {"$setOnInsert": doc},
            upsert=True,
            return_document=ReturnDocument.AFTER,
        )
        assert stored is not None  # an upsert returning AFTER always has the document
        return _suggestion(stored)

    async def get(self, suggestion_id: str) -> Suggestion | None:
        """One suggestion or None."""
        doc = await self._db["suggestions"].find_one({"_id": suggestion_id})
        return _suggestion(doc) if doc else None

    async def list(
        self, *, status: SuggestionStatus | None = None, limit: int = 100
    ) -> list[Suggestion]:
        """Suggestions, newest first."""
        query = {"status": status} if status else {}
        cursor = (
            self._db["suggestions"].find(query).sort([("created_at", -1), ("_id", 1)]).limit(limit)
        )
        return [_suggestion(d) async for d in cursor]

    async def decide(
        self, suggestion_id: str, *, approve: bool, by: str, now: datetime | None = None
    ) -> Suggestion | None:
        """Compare-and-set from pending; None when it had already been decided."""
        if not by:
            raise BadInputError("a decision needs the deciding admin's id")
        decision = {
            "status": "approved" if approve else "rejected",
            "decided_by": by,
            "decided_at": normalise_time(now or utcnow()),
        }
        doc = await self._db["suggestions"].find_one_and_update(
            {"_id": suggestion_id, "status": "pending"},
            {"$set": decision},
            return_document=ReturnDocument.AFTER,
        )
        if doc is not None:
            return _suggestion(doc)
        if await self._db["suggestions"].find_one({"_id": suggestion_id}, {"_id": 1}) is None:
            raise NotFoundError(f"suggestion {suggestion_id!r} does not exist")
        return None
