"""MongoDB topics and relations, and the atomic graph write."""

from __future__ import annotations

import builtins
from collections.abc import Iterable

from pymongo import DeleteOne, ReturnDocument

from shared.errors import BadInputError, NotFoundError
from shared.store._common import utcnow
from shared.store.models import (
    LEARNING_RELEVANCES,
    ChunkMark,
    KbChangeResult,
    KbChanges,
    Relation,
    RelationKey,
    Topic,
    TopicCounts,
)
from shared.store.models_provenance import UndoLabel
from shared.store.mongo.client import DuplicateKeyError, MongoDb, Session, mongo_errors
from shared.store.mongo.provenance import drop_for_subjects, missing_subjects, record_assertions
from shared.store.mongo.queries import (
    chunk_id,
    count_by,
    missing_endpoints,
    relation_from_doc,
    relation_id,
    relation_upsert,
    topic_from_doc,
    topic_upsert,
    touching,
)
from shared.store.mongo.undo import begin_logged, finish_logged
from shared.store.paging import PAGE, checked_after, checked_key, checked_page


@mongo_errors
class MongoKb:
    """The graph write shared by the store and the topic/relation repositories."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def apply(
        self, changes: KbChanges, chunk: ChunkMark | None = None, undo: UndoLabel | None = None
    ) -> KbChangeResult:
        """Apply a change in a transaction (replica set) or as ordered idempotent writes."""

        async def run(session: Session) -> KbChangeResult:
            if undo is not None and not await begin_logged(self._db, changes, undo, session):
                return KbChangeResult(applied=False)
            result = await self._apply(changes, chunk, session)
            if undo is not None:
                await finish_logged(self._db, undo, session)
            return result

        return await self._db.atomic(run)

    async def _apply(
        self, changes: KbChanges, chunk: ChunkMark | None, session: Session
    ) -> KbChangeResult:
        topics, relations = self._db["topics"], self._db["relations"]
        if chunk is not None:
            if (
                await self._db["sources"].find_one({"_id": chunk.source_id}, session=session)
                is None
            ):
                raise NotFoundError(f"source {chunk.source_id!r} does not exist")
            marker = chunk_id(chunk.source_id, chunk.chunk_index)
            if await self._db["source_chunks"].find_one({"_id": marker}, session=session):
                return KbChangeResult(applied=False)
        # Validate before writing anything, so a rejected change leaves no trace even
        # without a transaction.
        upserted = {t.id for t in changes.topics_upsert}
        deleted = set(changes.topics_delete)
        referenced = {r.source for r in changes.relations_upsert} | {
            r.target for r in changes.relations_upsert
        }
        lookup = sorted((referenced - upserted) | deleted)
        existing = {
            doc["_id"]
            async for doc in topics.find({"_id": {"$in": lookup}}, {"_id": 1}, session=session)
        }
        missing = missing_endpoints(
            changes.relations_upsert, upserted=upserted, deleted=deleted, existing=existing
        )
        if missing:
            shown = ", ".join(missing[:10]) + (" …" if len(missing) > 10 else "")
            raise BadInputError(
                f"{len(missing)} relation endpoint(s) are not topics: {shown}; nothing was written"
            )
        if changes.assertions:
            unknown = await missing_subjects(
                self._db, changes.assertions, topics_after=upserted,
                relations_after={relation_id(r.key) for r in changes.relations_upsert},
                session=session,
            )  # fmt: skip
            if unknown:
                raise BadInputError(
                    f"{len(unknown)} asserted subject(s) do not exist: {', '.join(unknown[:10])}; "
                    "nothing was written"
                )
        relations_deleted = 0
        if changes.relations_delete:
            await drop_for_subjects(
                self._db, topic_ids=[], session=session,
                relation_subjects=[relation_id(k) for k in changes.relations_delete],
            )  # fmt: skip
            deletes = [DeleteOne({"_id": relation_id(k)}) for k in changes.relations_delete]
            result = await relations.bulk_write(deletes, ordered=True, session=session)
            relations_deleted = result.deleted_count
        deleted_ids = sorted(existing & deleted)
        if deleted_ids:
            cascaded = [
                d["_id"]
                async for d in relations.find(touching(deleted_ids), {"_id": 1}, session=session)
            ]
            await drop_for_subjects(
                self._db, topic_ids=deleted_ids, relation_subjects=cascaded, session=session
            )
            await relations.delete_many(touching(deleted_ids), session=session)
            await topics.delete_many({"_id": {"$in": deleted_ids}}, session=session)
        now = utcnow()
        if changes.topics_upsert:
            ops = [topic_upsert(t, now) for t in changes.topics_upsert]
            await topics.bulk_write(ops, ordered=True, session=session)
        if changes.relations_upsert:
            ops = [relation_upsert(r) for r in changes.relations_upsert]
            await relations.bulk_write(ops, ordered=True, session=session)
        if changes.assertions:
            await record_assertions(self._db, changes.assertions, session)
        if chunk is not None:
            await self._mark_chunk(chunk, session)
        return KbChangeResult(
            applied=True,
            topic_ids_upserted=[t.id for t in changes.topics_upsert],
            topic_ids_deleted=deleted_ids,
            relations_upserted=len(changes.relations_upsert),
            relations_deleted=relations_deleted,
        )

    async def _mark_chunk(self, chunk: ChunkMark, session: Session) -> None:
        # Written last: without a transaction, a crash before this line means the chunk is
        # merged again on resume, which the idempotent upserts above make harmless.
        chunks = self._db["source_chunks"]
        try:
            await chunks.insert_one(
                {
                    "_id": chunk_id(chunk.source_id, chunk.chunk_index),
                    "source_id": chunk.source_id,
                    "chunk_index": chunk.chunk_index,
                    "merged_at": utcnow(),
                },
                session=session,
            )
        except DuplicateKeyError:
            if session is not None:
                raise  # a write error aborts the transaction; with_transaction reports it
            return  # merged concurrently by another worker; same changes, nothing to undo
        done = await chunks.count_documents({"source_id": chunk.source_id}, session=session)
        await self._db["sources"].update_one(
            {"_id": chunk.source_id},
            {"$set": {"chunks_done": done, "updated_at": utcnow()}},
            session=session,
        )


@mongo_errors
class MongoTopics:
    """TopicRepository on MongoDB."""

    def __init__(self, db: MongoDb, kb: MongoKb) -> None:
        self._db, self._kb = db, kb

    async def get(self, topic_id: str) -> Topic | None:
        """One topic or None."""
        doc = await self._db["topics"].find_one({"_id": topic_id})
        return topic_from_doc(doc) if doc else None

    async def get_many(self, topic_ids: Iterable[str]) -> list[Topic]:
        """The topics that exist among the ids, in id order."""
        cursor = self._db["topics"].find({"_id": {"$in": sorted(set(topic_ids))}}).sort("_id", 1)
        return [topic_from_doc(d) async for d in cursor]

    async def list(self, *, type: str | None = None, relevance: str | None = None) -> list[Topic]:
        """All topics (optionally filtered), in id order."""
        query: dict[str, str] = {}
        if type is not None:
            query["type"] = type
        if relevance is not None:
            query["learning_relevance"] = relevance
        return [topic_from_doc(d) async for d in self._db["topics"].find(query).sort("_id", 1)]

    async def page(self, *, after_id: str | None = None, limit: int = PAGE) -> builtins.list[Topic]:
        """Up to `limit` topics with ids after `after_id` (from the first), in id order."""
        limit = checked_page(limit)
        query = {} if after_id is None else {"_id": {"$gt": checked_after(after_id)}}
        cursor = self._db["topics"].find(query).sort("_id", 1).limit(limit)
        return [topic_from_doc(d) async for d in cursor]

    async def ids(self) -> set[str]:
        """Every topic id."""
        return {d["_id"] async for d in self._db["topics"].find({}, {"_id": 1})}

    async def recent_ids(self, limit: int = 200) -> builtins.list[str]:
        """The ids of the most recently updated topics, newest first."""
        cursor = self._db["topics"].find({}, {"_id": 1}).sort([("updated_at", -1), ("_id", 1)])
        return [d["_id"] async for d in cursor.limit(max(limit, 0))]

    async def upsert_many(self, topics: Iterable[Topic]) -> int:
        """Insert or update topics in one atomic write."""
        batch = list(topics)
        await self._kb.apply(KbChanges(topics_upsert=batch))
        return len(batch)

    async def set_relevance(self, topic_id: str, relevance: str, *, lock: bool = True) -> Topic:
        """Set a topic's learning relevance (locking it by default)."""
        if relevance not in LEARNING_RELEVANCES:
            raise BadInputError(
                f"unknown learning relevance {relevance!r}; expected one of {LEARNING_RELEVANCES}"
            )
        doc = await self._db["topics"].find_one_and_update(
            {"_id": topic_id},
            {
                "$set": {
                    "learning_relevance": relevance,
                    "relevance_locked": lock,
                    "updated_at": utcnow(),
                }
            },
            return_document=ReturnDocument.AFTER,
        )
        if doc is None:
            raise NotFoundError(f"topic {topic_id!r} does not exist")
        return topic_from_doc(doc)

    async def delete_many(self, topic_ids: Iterable[str]) -> int:
        """Delete topics and every relation touching them."""
        result = await self._kb.apply(KbChanges(topics_delete=list(topic_ids)))
        return len(result.topic_ids_deleted)

    async def counts(self) -> TopicCounts:
        """Totals by type and by learning relevance."""
        topics = self._db["topics"]
        by_type = {d["_id"]: d["n"] async for d in await topics.aggregate(count_by("type"))}
        by_rel = {
            d["_id"]: d["n"] async for d in await topics.aggregate(count_by("learning_relevance"))
        }
        return TopicCounts(total=sum(by_type.values()), by_type=by_type, by_relevance=by_rel)


@mongo_errors
class MongoRelations:
    """RelationRepository on MongoDB."""

    def __init__(self, db: MongoDb, kb: MongoKb) -> None:
        self._db, self._kb = db, kb

    async def list(self, *, topic_id: str | None = None, type: str | None = None) -> list[Relation]:
        """All relations (or those touching a topic / of a type), ordered by key."""
        query: dict[str, object] = touching([topic_id]) if topic_id is not None else {}
        if type is not None:
            query["type"] = type
        cursor = self._db["relations"].find(query).sort([("source", 1), ("target", 1), ("type", 1)])
        return [relation_from_doc(d) async for d in cursor]

    async def touching(self, topic_ids: Iterable[str]) -> builtins.list[Relation]:
        """The relations with either endpoint among the ids, ordered by key."""
        query = touching(sorted(set(topic_ids)))
        cursor = self._db["relations"].find(query).sort([("source", 1), ("target", 1), ("type", 1)])
        return [relation_from_doc(d) async for d in cursor]

    async def page(
        self, *, after: RelationKey | None = None, limit: int = PAGE
    ) -> builtins.list[Relation]:
        """Up to `limit` relations with keys after `after` (from the first), ordered by key."""
        limit = checked_page(limit)
        query: dict[str, object] = {}
        if after is not None:
            source, target, type_ = checked_key(after)
            # The bound on source keeps the scan of the relation_key index a range.
            query = {
                "source": {"$gte": source},
                "$or": [
                    {"source": {"$gt": source}},
                    {"source": source, "target": {"$gt": target}},
                    {"source": source, "target": target, "type": {"$gt": type_}},
                ],
            }
        order = [("source", 1), ("target", 1), ("type", 1)]
        cursor = self._db["relations"].find(query).sort(order).limit(limit)
        return [relation_from_doc(d) async for d in cursor]

    async def upsert_many(self, relations: Iterable[Relation]) -> int:
        """Insert or update relations in one atomic write."""
        batch = list(relations)
        await self._kb.apply(KbChanges(relations_upsert=batch))
        return len(batch)

    async def delete_many(self, keys: Iterable[RelationKey]) -> int:
        """Delete relations by key."""
        result = await self._kb.apply(KbChanges(relations_delete=list(keys)))
        return result.relations_deleted

    async def count_by_type(self) -> dict[str, int]:
        """Relation totals per type."""
        cursor = await self._db["relations"].aggregate(count_by("type"))
        return {d["_id"]: d["n"] async for d in cursor}
