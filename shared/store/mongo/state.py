"""MongoDB merge progress (one pipeline update), custom topics and flags."""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import Any

from pymongo import ReturnDocument

from shared.store._common import need, utcnow
from shared.store.models_state import CustomTopic, Flag, MergeProgress, check_increments
from shared.store.mongo.client import DuplicateKeyError, MongoDb, mongo_errors, upserted
from shared.store.mongo.state_docs import (
    custom_topic_doc,
    custom_topic_from_doc,
    flag_doc,
    flag_from_doc,
    progress_from_doc,
)

_COUNTS = ("topics_added", "topics_updated", "relations_added", "relations_dropped")


def progress_update(
    increments: dict[str, int], new_ids: list[str], cap: int
) -> builtins.list[dict[str, Any]]:
    """A pipeline update adding counts and appending unseen ids (first-seen order, capped)."""
    current = {"$ifNull": ["$changed_ids", []]}
    unseen = {
        "$filter": {
            "input": {"$literal": new_ids},
            "cond": {"$not": [{"$in": ["$$this", current]}]},
        }
    }
    stage: dict[str, Any] = {
        name: {"$add": [{"$ifNull": [f"${name}", 0]}, increments[name]]} for name in _COUNTS
    }
    stage["changed_ids"] = {"$slice": [{"$concatArrays": [current, unseen]}, max(cap, 0)]}
    stage["updated_at"] = {"$literal": utcnow()}
    return [{"$set": stage}]


@mongo_errors
class MongoMergeProgress:
    """MergeProgressRepository on MongoDB: each add is one atomic upsert."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def add(
        self,
        source_id: str,
        *,
        changed_ids: Iterable[str] = (),
        topics_added: int = 0,
        topics_updated: int = 0,
        relations_added: int = 0,
        relations_dropped: int = 0,
        max_changed_ids: int = 500,
    ) -> MergeProgress:
        """Add one chunk's counts atomically."""
        need(source_id, "merge progress needs a source id")
        increments = dict(
            zip(
                _COUNTS,
                (topics_added, topics_updated, relations_added, relations_dropped),
                strict=True,
            )
        )
        check_increments(*increments.values())
        new_ids = list(dict.fromkeys(changed_ids))
        doc = await self._db["merge_progress"].find_one_and_update(
            {"_id": source_id},
            progress_update(increments, new_ids, max_changed_ids),
            upsert=True,
            return_document=ReturnDocument.AFTER,
        )
        return progress_from_doc(upserted(doc))

    async def get(self, source_id: str) -> MergeProgress:
        """The counts so far (zeros when nothing was merged)."""
        doc = await self._db["merge_progress"].find_one({"_id": source_id})
        return progress_from_doc(doc) if doc else MergeProgress(source_id=source_id)

    async def delete(self, source_id: str) -> bool:
        """Forget a source's counts."""
        result = await self._db["merge_progress"].delete_one({"_id": source_id})
        return result.deleted_count > 0


@mongo_errors
class MongoCustomTopics:
    """CustomTopicRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def add(self, topic: CustomTopic) -> bool:
        """Insert a topic; False when its id is taken."""
        try:
            await self._db["custom_topics"].insert_one(custom_topic_doc(topic))
        except DuplicateKeyError:
            return False
        return True

    async def get(self, topic_id: str) -> CustomTopic | None:
        """One custom topic or None."""
        doc = await self._db["custom_topics"].find_one({"_id": topic_id})
        return custom_topic_from_doc(doc) if doc else None

    async def list(self) -> builtins.list[CustomTopic]:
        """Every custom topic, by id."""
        cursor = self._db["custom_topics"].find({}).sort("_id", 1)
        return [custom_topic_from_doc(d) async for d in cursor]

    async def ids(self) -> set[str]:
        """Every custom topic id."""
        return {d["_id"] async for d in self._db["custom_topics"].find({}, {"_id": 1})}

    async def delete(self, topic_id: str) -> bool:
        """Remove a custom topic."""
        result = await self._db["custom_topics"].delete_one({"_id": topic_id})
        return result.deleted_count > 0


@mongo_errors
class MongoFlags:
    """FlagRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def get(self, name: str) -> Flag | None:
        """A flag or None when unset."""
        doc = await self._db["flags"].find_one({"_id": name})
        return flag_from_doc(doc) if doc else None

    async def set(self, name: str, value: dict[str, Any] | None = None) -> Flag:
        """Set (or replace) a flag."""
        flag = Flag(name=need(name, "a flag needs a name"), value=value or {}, updated_at=utcnow())
        doc = flag_doc(flag)
        await self._db["flags"].replace_one({"_id": doc["_id"]}, doc, upsert=True)
        return flag

    async def set_if_absent(self, name: str, value: dict[str, Any] | None = None) -> bool:
        """Set a flag unless it is set; True if this call set it."""
        doc = flag_doc(Flag(name=need(name, "a flag needs a name"), value=value or {}))
        result = await self._db["flags"].update_one(
            {"_id": doc.pop("_id")}, {"$setOnInsert": doc}, upsert=True
        )
        return result.upserted_id is not None

    async def delete(self, name: str) -> bool:
        """Unset a flag."""
        return (await self._db["flags"].delete_one({"_id": name})).deleted_count > 0
