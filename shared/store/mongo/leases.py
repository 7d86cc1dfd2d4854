"""MongoDB locks (leases on the server's clock) and idempotency keys (TTL-indexed)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pymongo import ReturnDocument

from shared.store._common import check_ttl, need, normalise_time, utcnow
from shared.store.models_state import IdempotencyRecord, Lease
from shared.store.mongo.client import DuplicateKeyError, MongoDb, mongo_errors
from shared.store.mongo.state_docs import (
    idempotency_doc,
    idempotency_from_doc,
    idempotency_id,
    lease_from_doc,
)

# Leases compare against the server's clock ($$NOW), so replicas with skewed clocks agree.
_LIVE = {"$expr": {"$gt": ["$expires_at", "$$NOW"]}}


def acquire_update(owner: str, ttl_ms: int) -> list[dict[str, Any]]:
    """A pipeline update that takes the lease only when it is free (absent, expired or ours).

    The server refuses $expr in the filter of an upsert, so the whole decision is made by
    the update itself: a lease held by someone else is rewritten with its own values.
    Every reference in one $set stage reads the document as it was before the update.
    """
    me = {"$literal": owner}
    absent = {"$eq": [{"$type": "$owner"}, "missing"]}
    free = {"$or": [absent, {"$lte": ["$expires_at", "$$NOW"]}, {"$eq": ["$owner", me]}]}
    still_mine = {"$and": [{"$eq": ["$owner", me]}, {"$gt": ["$expires_at", "$$NOW"]}]}
    stage = {
        "owner": {"$cond": [free, me, "$owner"]},
        "acquired_at": {
            "$cond": [free, {"$cond": [still_mine, "$acquired_at", "$$NOW"]}, "$acquired_at"]
        },
        "expires_at": {"$cond": [free, {"$add": ["$$NOW", ttl_ms]}, "$expires_at"]},
    }
    return [{"$set": stage}]


def _ttl_ms(ttl_s: float) -> int:
    return max(int(check_ttl(ttl_s).total_seconds() * 1000), 1)


@mongo_errors
class MongoLocks:
    """LockRepository on MongoDB: acquire is one find_one_and_update with an expiry filter."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def acquire(self, name: str, owner: str, *, ttl_s: float) -> bool:
        """Take the lease unless another owner holds an unexpired one."""
        need(name, "a lock needs a name")
        need(owner, "a lock needs an owner")
        try:
            doc = await self._db["locks"].find_one_and_update(
                {"_id": name},
                acquire_update(owner, _ttl_ms(ttl_s)),
                upsert=True,
                return_document=ReturnDocument.AFTER,
            )
        except DuplicateKeyError:
            return False  # two first takers raced to insert; the other one won
        return doc is not None and doc.get("owner") == owner

    async def renew(self, name: str, owner: str, *, ttl_s: float) -> bool:
        """Extend the owner's lease (lapsed but not taken counts); False if it was lost."""
        result = await self._db["locks"].update_one(
            {"_id": name, "owner": owner},
            [{"$set": {"expires_at": {"$add": ["$$NOW", _ttl_ms(ttl_s)]}}}],
        )
        return result.matched_count > 0

    async def release(self, name: str, owner: str) -> bool:
        """Give the lease back; only its owner can."""
        result = await self._db["locks"].delete_one({"_id": name, "owner": owner})
        return result.deleted_count > 0

    async def get(self, name: str) -> Lease | None:
        """The unexpired lease on a name, or None."""
        doc = await self._db["locks"].find_one({"_id": name, **_LIVE})
        return lease_from_doc(doc) if doc else None


@mongo_errors
class MongoIdempotency:
    """IdempotencyRepository on MongoDB: one conditional upsert per key."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def put_if_absent(
        self,
        scope: str,
        key: str,
        value: dict[str, Any],
        *,
        ttl_s: float,
        now: datetime | None = None,
    ) -> bool:
        """Record the key unless an unexpired record exists; True if this call recorded it."""
        need(scope, "an idempotency key needs a scope")
        need(key, "an idempotency key must not be empty")
        moment = normalise_time(now or utcnow())
        record = IdempotencyRecord(
            scope=scope, key=key, value=value, created_at=moment,
            expires_at=moment + check_ttl(ttl_s),
        )  # fmt: skip
        doc = idempotency_doc(record)
        try:
            # Matches only an expired record (replaced); a live one makes the upsert's
            # insert collide on _id, which means "already there".
            await self._db["idempotency_keys"].replace_one(
                {"_id": doc["_id"], "expires_at": {"$lte": moment}}, doc, upsert=True
            )
        except DuplicateKeyError:
            return False
        return True

    async def get(
        self, scope: str, key: str, *, now: datetime | None = None
    ) -> IdempotencyRecord | None:
        """The unexpired record of a key, or None."""
        moment = normalise_time(now or utcnow())
        doc = await self._db["idempotency_keys"].find_one(
            {"_id": idempotency_id(scope, key), "expires_at": {"$gt": moment}}
        )
        return idempotency_from_doc(doc) if doc else None

    async def purge_expired(self, *, now: datetime | None = None, limit: int = 1000) -> int:
        """Delete up to limit expired records (the TTL index also does this in the background)."""
        moment = normalise_time(now or utcnow())
        cursor = self._db["idempotency_keys"].find({"expires_at": {"$lte": moment}}, {"_id": 1})
        ids = [d["_id"] async for d in cursor.limit(max(limit, 0))]
        if not ids:
            return 0
        result = await self._db["idempotency_keys"].delete_many(
            {"_id": {"$in": ids}, "expires_at": {"$lte": moment}}
        )
        return result.deleted_count
