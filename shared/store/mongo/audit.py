"""MongoDB audit trail (migration 10 creates its indexes)."""

from __future__ import annotations

from pymongo import DESCENDING, IndexModel

from shared.store.audit_rows import check_limit, checked_entry
from shared.store.models_audit import AuditEntry
from shared.store.mongo.client import MongoDb, mongo_errors

# ObjectId _ids grow with insertion, so (at, _id) orders entries of the same millisecond.
AUDIT_INDEXES = [
    IndexModel([("at", DESCENDING), ("_id", DESCENDING)]),
    IndexModel([("actor", DESCENDING), ("at", DESCENDING), ("_id", DESCENDING)]),
]


async def audit_indexes(db: MongoDb) -> None:
    """Migration 10: the audit collection's indexes."""
    await db["audit"].create_indexes(AUDIT_INDEXES)


@mongo_errors
class MongoAudit:
    """AuditRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def record(self, entry: AuditEntry) -> None:
        """Append one entry."""
        await self._db["audit"].insert_one(checked_entry(entry).model_dump())

    async def latest(self, *, limit: int = 50, actor: str | None = None) -> list[AuditEntry]:
        """The newest entries first (of one actor when given)."""
        query = {} if actor is None else {"actor": actor}
        cursor = (
            self._db["audit"]
            .find(query, {"_id": 0})
            .sort([("at", DESCENDING), ("_id", DESCENDING)])
            .limit(check_limit(limit))
        )
        return [AuditEntry.model_validate(doc) async for doc in cursor]
