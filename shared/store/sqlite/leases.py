"""SQLite locks (leases taken with one conditional upsert) and idempotency keys."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import Any

from shared.store._common import check_ttl, need, utcnow
from shared.store.models_state import IdempotencyRecord, Lease
from shared.store.sqlite.db import SqliteDb, dumps, to_text

# Expired idempotency rows removed by each insert: constant work per request, and the
# table still shrinks faster than one request can add to it.
_PURGE_PER_INSERT = 8

# One statement: insert, or take over an expired lease, or extend one's own. The WHERE of
# the upsert makes a lease held by someone else a no-op (rowcount 0).
_ACQUIRE = (
    "INSERT INTO locks (name, owner, acquired_at, expires_at) VALUES (:name, :owner, :now, :until) "
    "ON CONFLICT (name) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at, "
    "acquired_at = CASE WHEN locks.owner = excluded.owner AND locks.expires_at > :now "
    "THEN locks.acquired_at ELSE excluded.acquired_at END "
    "WHERE locks.expires_at <= :now OR locks.owner = excluded.owner"
)


class SqliteLocks:
    """LockRepository on SQLite; time is this machine's clock (one file, one machine)."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def acquire(self, name: str, owner: str, *, ttl_s: float) -> bool:
        """Take the lease unless another owner holds an unexpired one."""
        need(name, "a lock needs a name")
        need(owner, "a lock needs an owner")
        now = utcnow()
        params = {
            "name": name,
            "owner": owner,
            "now": to_text(now),
            "until": to_text(now + check_ttl(ttl_s)),
        }
        return await self._db.write(lambda c: c.execute(_ACQUIRE, params).rowcount > 0)

    async def renew(self, name: str, owner: str, *, ttl_s: float) -> bool:
        """Extend the owner's lease (lapsed but not taken counts); False if it was lost."""
        sql = "UPDATE locks SET expires_at = ? WHERE name = ? AND owner = ?"
        params = (to_text(utcnow() + check_ttl(ttl_s)), name, owner)
        return await self._db.write(lambda c: c.execute(sql, params).rowcount > 0)

    async def release(self, name: str, owner: str) -> bool:
        """Give the lease back; only its owner can."""
        sql = "DELETE FROM locks WHERE name = ? AND owner = ?"
        return await self._db.write(lambda c: c.execute(sql, (name, owner)).rowcount > 0)

    async def get(self, name: str) -> Lease | None:
        """The unexpired lease on a name, or None."""
        sql = (
            "SELECT name, owner, acquired_at, expires_at FROM locks "
            "WHERE name = ? AND expires_at > ?"
        )
        params = (name, to_text(utcnow()))
        row = await self._db.read(lambda c: c.execute(sql, params).fetchone())
        if row is None:
            return None
        return Lease(name=row[0], owner=row[1], acquired_at=row[2], expires_at=row[3])


class SqliteIdempotency:
    """IdempotencyRepository on SQLite: one conditional upsert per key."""

    def __init__(self, db: SqliteDb) -> None:
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
        moment = now or utcnow()
        created = to_text(moment)
        until = to_text(moment + check_ttl(ttl_s))
        params = {"scope": scope, "key": key, "value": dumps(value), "now": created, "until": until}

        def run(conn: sqlite3.Connection) -> bool:
            conn.execute(
                "DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys "
                "WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)",
                (created, _PURGE_PER_INSERT),
            )
            return (
                conn.execute(
                    "INSERT INTO idempotency_keys (scope, key, value, created_at, expires_at) "
                    "VALUES (:scope, :key, :value, :now, :until) "
                    "ON CONFLICT (scope, key) DO UPDATE SET "
                    "value = excluded.value, created_at = excluded.created_at, "
                    "expires_at = excluded.expires_at WHERE idempotency_keys.expires_at <= :now",
                    params,
                ).rowcount
                > 0
            )

        return await self._db.write(run)

    async def get(
        self, scope: str, key: str, *, now: datetime | None = None
    ) -> IdempotencyRecord | None:
        """The unexpired record of a key, or None."""
        sql = (
            "SELECT value, created_at, expires_at FROM idempotency_keys "
            "WHERE scope = ? AND key = ? AND expires_at > ?"
        )
        params = (scope, key, to_text(now or utcnow()))
        row = await self._db.read(lambda c: c.execute(sql, params).fetchone())
        if row is None:
            return None
        return IdempotencyRecord(
            scope=scope,
            key=key,
            value=json.loads(row[0]),
            created_at=row[1],
            expires_at=row[2],
        )

    async def purge_expired(self, *, now: datetime | None = None, limit: int = 1000) -> int:
        """Delete up to limit expired records; returns how many."""
        sql = (
            "DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys "
            "WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)"
        )
        params = (to_text(now or utcnow()), max(limit, 0))
        return await self._db.write(lambda c: c.execute(sql, params).rowcount)
