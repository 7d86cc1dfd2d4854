"""MongoDB tombstones of deleted topics (migration 13 creates the index)."""

from __future__ import annotations

from collections.abc import Iterable

from pymongo import DESCENDING, IndexModel

from shared.store._common import utcnow
from shared.store.models_tombstones import Tombstone
from shared.store.mongo.client import MongoDb, mongo_errors


async def tombstone_indexes(db: MongoDb) -> None:
    """Migration 13: newest-first listing (the topic id is the _id)."""
    await db["topic_tombstones"].create_indexes([IndexModel([("deleted_at", DESCENDING)])])


def _doc(t: Tombstone) -> dict[str, object]:
    return {"_id": t.topic_id, **t.model_dump(exclude={"topic_id"})}


def _tombstone(doc: dict[str, object]) -> Tombstone:
    return Tombstone.model_validate({"topic_id": doc["_id"],
                                     **{k: v for k, v in doc.items() if k != "_id"}})  # fmt: skip


@mongo_errors
class MongoTombstones:
    """TombstoneRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def add(self, tombstone: Tombstone) -> Tombstone:
        """Record (or replace) a tombstone."""
        stored = tombstone.model_copy(update={"deleted_at": tombstone.deleted_at or utcnow()})
        await self._db["topic_tombstones"].replace_one(
            {"_id": stored.topic_id}, _doc(stored), upsert=True
        )
        return stored

    async def get_many(self, topic_ids: Iterable[str]) -> dict[str, Tombstone]:
        """The tombstones among these ids."""
        ids = sorted(set(topic_ids))
        if not ids:
            return {}
        docs = await self._db["topic_tombstones"].find({"_id": {"$in": ids}}).to_list(None)
        return {t.topic_id: t for t in map(_tombstone, docs)}

    async def count_skips(self, topic_ids: Iterable[str], *, asserter: str) -> None:
        """One more skipped assertion on each tombstone."""
        ids = sorted(set(topic_ids))
        if ids:
            await self._db["topic_tombstones"].update_many(
                {"_id": {"$in": ids}}, {"$inc": {"skipped": 1}, "$set": {"last_asserter": asserter}}
            )

    async def remove(self, topic_ids: Iterable[str]) -> int:
        """Lift tombstones."""
        ids = sorted(set(topic_ids))
        if not ids:
            return 0
        result = await self._db["topic_tombstones"].delete_many({"_id": {"$in": ids}})
        return int(result.deleted_count)

    async def list(self, *, limit: int = 100) -> list[Tombstone]:
        """Newest first."""
        cursor = self._db["topic_tombstones"].find({}).sort("deleted_at", DESCENDING)
        return [_tombstone(d) for d in await cursor.limit(max(1, limit)).to_list(None)]
