"""MongoDB locks (server-clock leases) and idempotency keys (TTL-indexed)."""

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


def acquire_filter(name: str, owner: str) -> dict[str, Any]:
    """Match the lock only when it is free to take: expired, or held by this owner."""
    free = {"$or": [{"$lte": ["$expires_at", "$$NOW"]}, {"$eq": ["$owner", {"$literal": owner}]}]}
    return {"_id": name, "$expr": free}


def acquire_update(owner: str, ttl_ms: int) -> list[dict[str, Any]]:
    """A pipeline update taking (or extending) the lease; acquired_at kept on an extension."""
    mine = {"$and": [{"$eq": ["$owner", {"$literal": owner}]}, {"$gt": ["$expires_at", "$$NOW"]}]}
    stage = {
        "owner": {"$literal": owner},
        "acquired_at": {"$cond": [mine, "$acquired_at", "$$NOW"]},
        "expires_at": {"$add": ["$$NOW", ttl_ms]},
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
                acquire_filter(name, owner),
                acquire_update(owner, _ttl_ms(ttl_s)),
                upsert=True,
                return_document=ReturnDocument.AFTER,
            )
        except DuplicateKeyError:
            return False  # the lock exists and the filter refused it: someone else holds it
        return doc is not None and doc.get("owner") == owner

    async def renew(self, name: str, owner: str, *, ttl_s: float) -> bool:
        """Extend the owner's unexpired lease; False if it was lost."""
        result = await self._db["locks"].update_one(
            {"_id": name, "owner": owner, **_LIVE},
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
