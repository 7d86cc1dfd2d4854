"""MongoDB sources, source texts and the chunk merge record (`source_chunks`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from pymongo import ReturnDocument

from shared.errors import NotFoundError
from shared.store._common import utcnow
from shared.store.models import Source, SourceStatus
from shared.store.mongo.client import MongoDb, mongo_errors


def _source(doc: Mapping[str, Any]) -> Source:
    data = {k: v for k, v in doc.items() if k != "_id"}
    return Source.model_validate({"id": doc["_id"], **data})


@mongo_errors
class MongoSources:
    """SourceRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def create(self, source: Source) -> Source:
        """Insert a source; an existing id returns the stored one unchanged."""
        now = utcnow()
        doc = source.model_dump(exclude={"id", "created_at", "updated_at"})
        doc.update(created_at=source.created_at or now, updated_at=now)
        stored = await self._db["sources"].find_one_and_update(
            {"_id": source.id},
            {"$setOnInsert": doc},
            upsert=True,
            return_document=ReturnDocument.AFTER,
        )
        assert stored is not None  # an upsert returning AFTER always has the document
        return _source(stored)

    async def get(self, source_id: str) -> Source | None:
        """One source or None."""
        doc = await self._db["sources"].find_one({"_id": source_id})
        return _source(doc) if doc else None

    async def find_by_sha256(self, sha256: str) -> list[Source]:
        """Sources with this content hash, newest first."""
        cursor = self._db["sources"].find({"sha256": sha256}).sort([("created_at", -1), ("_id", 1)])
        return [_source(d) async for d in cursor]

    async def list(self, *, status: SourceStatus | None = None, limit: int = 100) -> list[Source]:
        """Sources, newest first."""
        query = {"status": status} if status else {}
        cursor = self._db["sources"].find(query).sort([("created_at", -1), ("_id", 1)]).limit(limit)
        return [_source(d) async for d in cursor]

    async def set_status(
        self,
        source_id: str,
        status: SourceStatus,
        *,
        error: str | None = None,
        only_from: Collection[SourceStatus] | None = None,
    ) -> Source | None:
        """Move a source to a status; with only_from a compare-and-set (None if refused)."""
        query: dict[str, Any] = {"_id": source_id}
        if only_from is not None:
            query["status"] = {"$in": sorted(only_from)}
        doc = await self._db["sources"].find_one_and_update(
            query,
            {"$set": {"status": status, "error": error, "updated_at": utcnow()}},
            return_document=ReturnDocument.AFTER,
        )
        if doc is not None:
            return _source(doc)
        if await self._db["sources"].find_one({"_id": source_id}, {"_id": 1}) is None:
            raise NotFoundError(f"source {source_id!r} does not exist")
        return None

    async def set_chunks_total(self, source_id: str, total: int) -> Source:
        """Record how many chunks the source was split into."""
        doc = await self._db["sources"].find_one_and_update(
            {"_id": source_id},
            {"$set": {"chunks_total": total, "updated_at": utcnow()}},
            return_document=ReturnDocument.AFTER,
        )
        if doc is None:
            raise NotFoundError(f"source {source_id!r} does not exist")
        return _source(doc)

    async def merged_chunks(self, source_id: str) -> set[int]:
        """Indexes of the chunks whose graph changes have been applied."""
        cursor = self._db["source_chunks"].find({"source_id": source_id}, {"chunk_index": 1})
        return {d["chunk_index"] async for d in cursor}

    async def first_unmerged_chunk(self, source_id: str) -> int:
        """The lowest chunk index not yet merged."""
        merged = await self.merged_chunks(source_id)
        index = 0
        while index in merged:
            index += 1
        return index

    async def delete(self, source_id: str) -> bool:
        """Delete a source, its text and its chunk record."""
        await self._db["source_chunks"].delete_many({"source_id": source_id})
        await self._db["source_texts"].delete_one({"_id": source_id})
        result = await self._db["sources"].delete_one({"_id": source_id})
        return result.deleted_count > 0

    async def count_by_status(self) -> dict[str, int]:
        """Source totals per status."""
        pipeline = [{"$group": {"_id": "$status", "n": {"$sum": 1}}}]
        return {d["_id"]: d["n"] async for d in await self._db["sources"].aggregate(pipeline)}


@mongo_errors
class MongoSourceTexts:
    """SourceTextRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def put(self, source_id: str, text: str) -> None:
        """Store (or replace) a source's text."""
        await self._db["source_texts"].replace_one(
            {"_id": source_id}, {"text": text, "updated_at": utcnow()}, upsert=True
        )

    async def get(self, source_id: str) -> str | None:
        """A source's text or None."""
        doc = await self._db["source_texts"].find_one({"_id": source_id})
        return doc["text"] if doc else None

    async def delete(self, source_id: str) -> bool:
        """Delete a source's text."""
        return (await self._db["source_texts"].delete_one({"_id": source_id})).deleted_count > 0
