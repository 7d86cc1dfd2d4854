"""MongoDB chat turns: what each recent answer was made of, until it expires."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from shared.store._common import normalise_time, utcnow
from shared.store.models_state import ChatTurn
from shared.store.mongo.client import MongoDb, mongo_errors

# Phrases by which R42 said "not in the KB" before turns carried kb_miss (migration 15).
LEGACY_MISS_PHRASES = (
    "staat niet in de kennisgraaf",
    "niet in de kennisgraaf staat",
    "not in the knowledge graph",
    "kon hier geen antwoord op formuleren",
)


async def turns_kb_miss(db: MongoDb) -> None:
    """Give every turn kb_miss; turns stored before it get it from R42's fixed wording."""
    turns = db["turns"]
    missing = {"kb_miss": {"$exists": False}}
    pattern = "|".join(re.escape(p) for p in LEGACY_MISS_PHRASES)
    said = {"answer": {"$regex": pattern, "$options": "i"}}
    await turns.update_many({**missing, **said}, {"$set": {"kb_miss": True}})
    await turns.update_many(missing, {"$set": {"kb_miss": False}})


def turn_doc(turn: ChatTurn) -> dict[str, Any]:
    """A dated turn's document (_id is its turn id)."""
    return {"_id": turn.turn_id, **turn.model_dump(exclude={"turn_id"})}


def _turn(doc: Mapping[str, Any]) -> ChatTurn:
    return ChatTurn.model_validate(
        {"turn_id": doc["_id"], **{k: v for k, v in doc.items() if k != "_id"}}
    )


@mongo_errors
class MongoTurns:
    """TurnRepository on MongoDB; a TTL index on expires_at deletes expired turns."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def put(self, turn: ChatTurn, *, now: datetime | None = None) -> ChatTurn:
        """Remember (or replace) a turn (the server's TTL monitor drops expired ones)."""
        stored = turn.dated(normalise_time(now or utcnow()))
        doc = turn_doc(stored)
        await self._db["turns"].replace_one({"_id": doc["_id"]}, doc, upsert=True)
        return stored

    async def get(self, turn_id: str, *, now: datetime | None = None) -> ChatTurn | None:
        """A turn that has not expired, or None (the TTL monitor runs only once a minute)."""
        moment = normalise_time(now or utcnow())
        doc = await self._db["turns"].find_one({"_id": turn_id, "expires_at": {"$gt": moment}})
        return _turn(doc) if doc else None

    async def prune(self, *, now: datetime | None = None) -> int:
        """Delete expired turns; how many went."""
        moment = normalise_time(now or utcnow())
        result = await self._db["turns"].delete_many({"expires_at": {"$lte": moment}})
        return int(result.deleted_count)

    async def recent(
        self, *, since: datetime | None = None, limit: int = 100, now: datetime | None = None
    ) -> list[ChatTurn]:
        """Turns put at or after `since` that have not expired, newest first."""
        if limit <= 0:
            return []
        query: dict[str, Any] = {"expires_at": {"$gt": normalise_time(now or utcnow())}}
        if since is not None:
            query["created_at"] = {"$gte": normalise_time(since)}
        cursor = self._db["turns"].find(query).sort([("created_at", -1), ("_id", 1)]).limit(limit)
        return [_turn(doc) async for doc in cursor]
