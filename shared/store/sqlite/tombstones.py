"""SQLite tombstones of deleted topics (migration 13)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from typing import Any

from shared.store._common import utcnow
from shared.store.models_tombstones import Tombstone
from shared.store.sqlite.db import SqliteDb, to_text

TOMBSTONE_SCHEMA = """
CREATE TABLE IF NOT EXISTS topic_tombstones (
    topic_id TEXT PRIMARY KEY,
    label TEXT NOT NULL,
    deleted_by TEXT NOT NULL,
    deleted_at TEXT NOT NULL,
    undo_id TEXT,
    skipped INTEGER NOT NULL DEFAULT 0,
    last_asserter TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS topic_tombstones_at ON topic_tombstones (deleted_at);
"""

_COLUMNS = "topic_id, label, deleted_by, deleted_at, undo_id, skipped, last_asserter"
_BATCH = 500  # SQLite's host parameter limit is far above this


def tombstone_table(conn: sqlite3.Connection) -> None:
    """Migration 13: the topic_tombstones table (inside the migration's transaction)."""
    for statement in TOMBSTONE_SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)


def _row(row: tuple[Any, ...]) -> Tombstone:
    return Tombstone.model_validate(dict(zip(_COLUMNS.split(", "), row, strict=True)))


class SqliteTombstones:
    """TombstoneRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def add(self, tombstone: Tombstone) -> Tombstone:
        """Record (or replace) a tombstone."""
        stored = tombstone.model_copy(update={"deleted_at": tombstone.deleted_at or utcnow()})
        params = (stored.topic_id, stored.label, stored.deleted_by, to_text(stored.deleted_at),
                  stored.undo_id, stored.skipped, stored.last_asserter)  # fmt: skip
        sql = f"INSERT OR REPLACE INTO topic_tombstones ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)"
        await self._db.write(lambda c: c.execute(sql, params))
        return stored

    async def get_many(self, topic_ids: Iterable[str]) -> dict[str, Tombstone]:
        """The tombstones among these ids."""
        ids = sorted(set(topic_ids))

        def read(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
            rows: list[tuple[Any, ...]] = []
            for start in range(0, len(ids), _BATCH):
                part = ids[start : start + _BATCH]
                marks = ", ".join("?" * len(part))
                sql = f"SELECT {_COLUMNS} FROM topic_tombstones WHERE topic_id IN ({marks})"
                rows += conn.execute(sql, part).fetchall()
            return rows

        if not ids:
            return {}
        return {t.topic_id: t for t in map(_row, await self._db.read(read))}

    async def count_skips(self, topic_ids: Iterable[str], *, asserter: str) -> None:
        """One more skipped assertion on each tombstone."""
        ids = sorted(set(topic_ids))
        sql = ("UPDATE topic_tombstones SET skipped = skipped + 1, last_asserter = ? "
               "WHERE topic_id = ?")  # fmt: skip

        def count(conn: sqlite3.Connection) -> None:
            conn.executemany(sql, [(asserter, i) for i in ids])

        if ids:
            await self._db.write(count)

    async def remove(self, topic_ids: Iterable[str]) -> int:
        """Lift tombstones."""
        ids = sorted(set(topic_ids))

        def delete(conn: sqlite3.Connection) -> int:
            sql = "DELETE FROM topic_tombstones WHERE topic_id = ?"
            return sum(conn.execute(sql, (i,)).rowcount for i in ids)

        return await self._db.write(delete) if ids else 0

    async def list(self, *, limit: int = 100) -> list[Tombstone]:
        """Newest first."""
        sql = f"SELECT {_COLUMNS} FROM topic_tombstones ORDER BY deleted_at DESC LIMIT ?"
        rows = await self._db.read(lambda c: c.execute(sql, (max(1, limit),)).fetchall())
        return [_row(r) for r in rows]
