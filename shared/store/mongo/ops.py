"""MongoDB LLM call telemetry, handbook sync state and curriculum."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from shared.errors import BadInputError
from shared.store._common import build, normalise_time, utcnow
from shared.store.models import HandbookSyncState
from shared.store.models_learning import CallAggregate, CurriculumEntry, LlmCall
from shared.store.models_telemetry import LLMCallRecord
from shared.store.mongo.client import MongoDb, mongo_errors
from shared.store.mongo.queries import call_aggregate


@mongo_errors
class MongoLlmCalls:
    """LlmCallRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def add(self, record: LLMCallRecord, *, call_id: str | None = None) -> str:
        """Store a record; idempotent by call_id."""
        call_id = call_id or uuid.uuid4().hex
        doc = record.model_dump()
        doc["occurred_at"] = normalise_time(record.occurred_at)
        await self._db["llm_calls"].update_one({"_id": call_id}, {"$setOnInsert": doc}, upsert=True)
        return call_id

    async def last(self, n: int = 20) -> list[LlmCall]:
        """The newest n calls, newest first."""
        cursor = (
            self._db["llm_calls"].find({}).sort([("occurred_at", -1), ("_id", 1)]).limit(max(n, 0))
        )
        return [LlmCall.model_validate({**d, "id": d["_id"]}) async for d in cursor]

    async def aggregate(
        self, *, by: Literal["task", "model"], since: datetime | None = None
    ) -> list[CallAggregate]:
        """Totals per task or per model, highest cost first."""
        if by not in ("task", "model"):
            raise BadInputError(f"aggregate by task or model, not {by!r}")
        pipeline = call_aggregate(by, normalise_time(since) if since else None)
        cursor = await self._db["llm_calls"].aggregate(pipeline)
        return [
            CallAggregate.model_validate(
                {**{k: v for k, v in d.items() if k != "_id"}, "key": d["_id"]}
            )
            async for d in cursor
        ]

    async def count(self) -> int:
        """How many calls are stored."""
        return await self._db["llm_calls"].count_documents({})


@mongo_errors
class MongoHandbookSync:
    """HandbookSyncRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def get(self, path: str) -> HandbookSyncState | None:
        """The state of one path."""
        doc = await self._db["handbook_sync_state"].find_one({"_id": path})
        return (
            HandbookSyncState(path=path, sha=doc["sha"], updated_at=doc.get("updated_at"))
            if doc
            else None
        )

    async def put(self, path: str, sha: str) -> None:
        """Record the sha ingested for a path."""
        build(HandbookSyncState, path=path, sha=sha)
        await self._db["handbook_sync_state"].replace_one(
            {"_id": path}, {"sha": sha, "updated_at": utcnow()}, upsert=True
        )

    async def all(self) -> dict[str, str]:
        """path -> sha for every path."""
        cursor = self._db["handbook_sync_state"].find({}).sort("_id", 1)
        return {d["_id"]: d["sha"] async for d in cursor}

    async def delete(self, path: str) -> bool:
        """Forget a path."""
        return (await self._db["handbook_sync_state"].delete_one({"_id": path})).deleted_count > 0


@mongo_errors
class MongoCurriculum:
    """CurriculumRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def set(self, week: str, topic_id: str) -> None:
        """Schedule a topic for a week."""
        build(CurriculumEntry, week=week, topic_id=topic_id)
        await self._db["curriculum"].replace_one(
            {"_id": week}, {"topic_id": topic_id, "updated_at": utcnow()}, upsert=True
        )

    async def get(self, week: str) -> str | None:
        """The topic of a week."""
        doc = await self._db["curriculum"].find_one({"_id": week})
        return doc["topic_id"] if doc else None

    async def all(self) -> list[CurriculumEntry]:
        """The whole schedule, by week."""
        cursor = self._db["curriculum"].find({}).sort("_id", 1)
        return [CurriculumEntry(week=d["_id"], topic_id=d["topic_id"]) async for d in cursor]

    async def delete(self, week: str) -> bool:
        """Unschedule a week."""
        return (await self._db["curriculum"].delete_one({"_id": week})).deleted_count > 0
