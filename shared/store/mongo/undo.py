"""MongoDB change log: before-images of graph changes, written before the change itself.

Without transactions the log entry is written first with applied=False and flagged
applied after the change, so a retry after a crash re-applies with the original image.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pymongo import ReturnDocument

from shared.store._common import need, normalise_time, utcnow
from shared.store.models import KbChanges, RelationKey, relation_from_subject, relation_subject
from shared.store.models_provenance import ChangeBatch, UndoLabel
from shared.store.mongo.client import DuplicateKeyError, MongoDb, Session, mongo_errors
from shared.store.mongo.provenance import assertion_from_doc
from shared.store.mongo.queries import relation_from_doc, topic_from_doc, touching

_IMAGE = ("topics_before", "topics_absent", "relations_before", "relations_absent",
          "assertions_before")  # fmt: skip


async def capture(
    db: MongoDb, changes: KbChanges, undo: UndoLabel, session: Session
) -> ChangeBatch:
    """The before-image of everything the change touches (including cascaded relations)."""
    upserted = {t.id for t in changes.topics_upsert}
    touched = sorted(upserted | set(changes.topics_delete))
    topics = [topic_from_doc(d) async for d in db["topics"].find(
        {"_id": {"$in": touched}}, session=session).sort("_id", 1)]  # fmt: skip
    found = {t.id for t in topics}
    deleted = sorted(set(changes.topics_delete) & found)
    relations = {}
    if deleted:
        async for doc in db["relations"].find(touching(deleted), session=session):
            relations[doc["_id"]] = relation_from_doc(doc)
    cascaded = set(relations)
    upsert_keys = {relation_subject(r.key) for r in changes.relations_upsert}
    wanted = upsert_keys | {relation_subject(k) for k in changes.relations_delete}
    async for doc in db["relations"].find({"_id": {"$in": sorted(wanted)}}, session=session):
        relations[doc["_id"]] = relation_from_doc(doc)
    dropped = cascaded | {relation_subject(k) for k in changes.relations_delete}
    query = {"$or": [{"kind": "topic", "subject": {"$in": deleted}},
                     {"kind": "relation", "subject": {"$in": sorted(dropped)}}]}  # fmt: skip
    assertions = [
        assertion_from_doc(d) async for d in db["assertions"].find(query, session=session)
    ]
    absent: list[RelationKey] = [
        relation_from_subject(s) for s in sorted(upsert_keys - set(relations))
    ]
    return ChangeBatch(
        id=undo.batch_id, actor=undo.actor, reason=undo.reason, created_at=utcnow(),
        topics_before=topics, topics_absent=sorted(upserted - found),
        relations_before=[relations[k] for k in sorted(relations)], relations_absent=absent,
        assertions_before=assertions,
    )  # fmt: skip


async def begin_logged(db: MongoDb, changes: KbChanges, undo: UndoLabel, session: Session) -> bool:
    """Log the before-image unless this batch was applied already; False means skip it."""
    log = db["change_log"]
    existing = await log.find_one({"_id": undo.batch_id}, {"applied": 1}, session=session)
    if existing is not None:
        return not existing.get("applied", False)  # a crashed attempt: apply again
    batch = await capture(db, changes, undo, session)
    doc = {"_id": batch.id, **batch.model_dump(mode="python", exclude={"id"}), "applied": False}
    doc["before"] = {k: doc.pop(k) for k in _IMAGE}
    try:
        await log.insert_one(_plain(doc), session=session)
    except DuplicateKeyError:
        if session is not None:
            raise
        return False  # another worker is applying the same batch
    return True


async def finish_logged(db: MongoDb, undo: UndoLabel, session: Session) -> None:
    """Flag a logged change as applied."""
    await db["change_log"].update_one(
        {"_id": undo.batch_id}, {"$set": {"applied": True}}, session=session
    )


def _plain(value: Any) -> Any:
    # model_dump(mode="python") keeps datetimes (BSON dates); tuples become lists.
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def batch_doc(batch: ChangeBatch) -> dict[str, Any]:
    """The change_log document of a before-image logged outside apply_kb_changes."""
    doc = {"_id": batch.id, **batch.model_dump(mode="python", exclude={"id"}), "applied": True}
    doc["created_at"] = normalise_time(batch.created_at or utcnow())
    doc["before"] = {k: doc.pop(k) for k in _IMAGE}
    return dict(_plain(doc))


def _batch(doc: Mapping[str, Any]) -> ChangeBatch:
    data = {k: v for k, v in doc.items() if k not in ("_id", "before", "applied")}
    return ChangeBatch.model_validate({"id": doc["_id"], **data, **doc.get("before", {})})


@mongo_errors
class MongoChangeLog:
    """ChangeLogRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def record(self, batch: ChangeBatch) -> bool:
        """Log a before-image taken outside apply_kb_changes; False if its id is logged."""
        try:
            await self._db["change_log"].insert_one(batch_doc(batch))
        except DuplicateKeyError:
            return False
        return True

    async def get(self, batch_id: str) -> ChangeBatch | None:
        """One logged change or None."""
        doc = await self._db["change_log"].find_one({"_id": batch_id})
        return _batch(doc) if doc else None

    async def list(self, *, limit: int = 20) -> builtins.list[ChangeBatch]:
        """Logged changes, newest first."""
        cursor = self._db["change_log"].find({}).sort([("created_at", -1), ("_id", 1)])
        return [_batch(d) async for d in cursor.limit(max(limit, 0))]

    async def mark_undone(
        self, batch_id: str, *, by: str, now: datetime | None = None
    ) -> ChangeBatch | None:
        """Record that a change was undone (once)."""
        need(by, "undoing needs the admin's id")
        doc = await self._db["change_log"].find_one_and_update(
            {"_id": batch_id, "undone_at": None},
            {"$set": {"undone_at": normalise_time(now or utcnow()), "undone_by": by}},
            return_document=ReturnDocument.AFTER,
        )
        return _batch(doc) if doc else None
