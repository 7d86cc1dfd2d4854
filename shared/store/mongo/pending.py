"""MongoDB pending merges: held chunk results and relations waiting for an endpoint topic."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pymongo import ASCENDING, IndexModel, UpdateOne

from shared.store._common import need, utcnow
from shared.store.models_pending import HeldChunk, PendingRelation
from shared.store.mongo.client import MongoDb, mongo_errors

_REL_SORT = [("source_id", ASCENDING), ("chunk_index", ASCENDING), ("source", ASCENDING),
             ("target", ASCENDING), ("type", ASCENDING)]  # fmt: skip


def pending_indexes() -> dict[str, list[IndexModel]]:
    """Migration 12: lookups by source id and by either endpoint."""
    return {
        "held_chunks": [IndexModel([("source_id", ASCENDING), ("chunk_index", ASCENDING)])],
        "pending_relations": [
            IndexModel([("source_id", ASCENDING), ("chunk_index", ASCENDING)]),
            IndexModel([("source", ASCENDING)]),
            IndexModel([("target", ASCENDING)]),
        ],
    }


async def pending_collections(db: MongoDb) -> None:
    """Migration 12 step (idempotent)."""
    for name, models in pending_indexes().items():
        await db[name].create_indexes(models)


def _held_id(source_id: str, chunk_index: int) -> str:
    return f"{source_id}:{chunk_index}"


def _rel_id(p: PendingRelation) -> str:
    source_id, chunk, *key = p.identity
    return f"{source_id}:{chunk}:{'|'.join(key)}"


def _relation(doc: dict[str, Any]) -> PendingRelation:
    return PendingRelation.model_validate(
        {"source_id": doc["source_id"], "chunk_index": doc["chunk_index"],
         "added_at": doc.get("added_at"),
         "relation": {"source": doc["source"], "target": doc["target"], "type": doc["type"],
                      "description": doc.get("description")}}
    )  # fmt: skip


@mongo_errors
class MongoPendingMerges:
    """PendingMergeRepository on MongoDB (ids derived from the identity: repeats dedupe)."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def hold(self, source_id: str, chunk_index: int, payload: dict[str, Any]) -> bool:
        """Keep a chunk result; the first one held wins."""
        chunk = HeldChunk(source_id=source_id, chunk_index=chunk_index, payload=payload)
        doc = {"source_id": chunk.source_id, "chunk_index": chunk.chunk_index,
               "payload": chunk.payload, "held_at": utcnow()}  # fmt: skip
        result = await self._db["held_chunks"].update_one(
            {"_id": _held_id(source_id, chunk_index)}, {"$setOnInsert": doc}, upsert=True
        )
        return result.upserted_id is not None

    async def held(self, source_id: str, chunk_index: int) -> HeldChunk | None:
        """One held chunk result or None."""
        doc = await self._db["held_chunks"].find_one({"_id": _held_id(source_id, chunk_index)})
        if doc is None:
            return None
        return HeldChunk(source_id=source_id, chunk_index=chunk_index, payload=doc["payload"],
                         held_at=doc.get("held_at"))  # fmt: skip

    async def held_indexes(self, source_id: str) -> list[int]:
        """Held chunk indexes, ascending."""
        cursor = self._db["held_chunks"].find({"source_id": source_id}, {"chunk_index": 1})
        return sorted([int(d["chunk_index"]) async for d in cursor])

    async def release(self, source_id: str, chunk_index: int) -> bool:
        """Forget a held chunk result."""
        result = await self._db["held_chunks"].delete_one({"_id": _held_id(source_id, chunk_index)})
        return result.deleted_count > 0

    async def add_relations(self, relations: Iterable[PendingRelation]) -> int:
        """Insert pending relations, ignoring repeats."""
        now = utcnow()
        ops = []
        for p in relations:
            source_id, chunk, source, target, type_ = p.identity
            doc = {"source_id": source_id, "chunk_index": chunk, "source": source,
                   "target": target, "type": type_, "description": p.relation.description,
                   "added_at": p.added_at or now}  # fmt: skip
            ops.append(UpdateOne({"_id": _rel_id(p)}, {"$setOnInsert": doc}, upsert=True))
        if not ops:
            return 0
        result = await self._db["pending_relations"].bulk_write(ops, ordered=False)
        return result.upserted_count

    async def relations_of(self, source_id: str) -> list[PendingRelation]:
        """A source's pending relations."""
        need(source_id, "pending relations need a source id")
        cursor = self._db["pending_relations"].find({"source_id": source_id}).sort(_REL_SORT)
        return [_relation(d) async for d in cursor]

    async def relations_touching(self, topic_ids: Iterable[str]) -> list[PendingRelation]:
        """Pending relations with an endpoint among the ids."""
        ids = sorted(set(topic_ids))
        query = {"$or": [{"source": {"$in": ids}}, {"target": {"$in": ids}}]}
        cursor = self._db["pending_relations"].find(query).sort(_REL_SORT)
        return [_relation(d) async for d in cursor]

    async def all_relations(self, *, limit: int = 1000) -> list[PendingRelation]:
        """Every source's pending relations, longest waiting first, at most `limit`."""
        if limit <= 0:
            return []
        order = [("added_at", ASCENDING), *_REL_SORT]
        cursor = self._db["pending_relations"].find({}).sort(order).limit(limit)
        return [_relation(d) async for d in cursor]

    async def count_relations(self) -> int:
        """How many pending relations wait, over every source."""
        return await self._db["pending_relations"].count_documents({})

    async def remove_relations(self, relations: Iterable[PendingRelation]) -> int:
        """Delete pending relations by identity."""
        ids = [_rel_id(p) for p in relations]
        if not ids:
            return 0
        result = await self._db["pending_relations"].delete_many({"_id": {"$in": ids}})
        return result.deleted_count

    async def clear(self, source_id: str) -> tuple[int, int]:
        """Delete a source's held chunks and pending relations."""
        chunks = await self._db["held_chunks"].delete_many({"source_id": source_id})
        rels = await self._db["pending_relations"].delete_many({"source_id": source_id})
        return chunks.deleted_count, rels.deleted_count
