"""SQLite pending merges: held chunk results and relations waiting for an endpoint topic."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from shared.store._common import need, utcnow
from shared.store.models_pending import HeldChunk, PendingRelation
from shared.store.sqlite.db import SqliteDb, dumps, to_text

PENDING_SCHEMA = """
CREATE TABLE IF NOT EXISTS held_chunks (
    source_id TEXT NOT NULL,
    chunk_index INTEGER NOT NULL,
    payload TEXT NOT NULL,
    held_at TEXT NOT NULL,
    PRIMARY KEY (source_id, chunk_index)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pending_relations (
    source_id TEXT NOT NULL,
    chunk_index INTEGER NOT NULL,
    source TEXT NOT NULL,
    target TEXT NOT NULL,
    type TEXT NOT NULL,
    description TEXT,
    added_at TEXT NOT NULL,
    PRIMARY KEY (source_id, chunk_index, source, target, type)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS pending_relations_source ON pending_relations (source);
CREATE INDEX IF NOT EXISTS pending_relations_target ON pending_relations (target);
"""

_REL_COLUMNS = "source_id, chunk_index, source, target, type, description, added_at"
_REL_ORDER = "ORDER BY source_id, chunk_index, source, target, type"
_REL_KEY = "source_id = ? AND chunk_index = ? AND source = ? AND target = ? AND type = ?"


def pending_tables(conn: sqlite3.Connection) -> None:
    """Migration 12: the held_chunks and pending_relations tables (inside the migration's
    transaction: executescript would commit it)."""
    for statement in PENDING_SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)


def _relation(row: tuple[Any, ...]) -> PendingRelation:
    source_id, chunk_index, source, target, type_, description, added_at = row
    return PendingRelation.model_validate(
        {"source_id": source_id, "chunk_index": chunk_index, "added_at": added_at,
         "relation": {"source": source, "target": target, "type": type_,
                      "description": description}}
    )  # fmt: skip


class SqlitePendingMerges:
    """PendingMergeRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def hold(self, source_id: str, chunk_index: int, payload: dict[str, Any]) -> bool:
        """Keep a chunk result; the first one held wins."""
        chunk = HeldChunk(source_id=source_id, chunk_index=chunk_index, payload=payload)
        sql = ("INSERT INTO held_chunks (source_id, chunk_index, payload, held_at) "
               "VALUES (?, ?, ?, ?) ON CONFLICT (source_id, chunk_index) DO NOTHING")  # fmt: skip
        params = (chunk.source_id, chunk.chunk_index, dumps(chunk.payload), to_text(utcnow()))
        return await self._db.write(lambda c: c.execute(sql, params).rowcount > 0)

    async def held(self, source_id: str, chunk_index: int) -> HeldChunk | None:
        """One held chunk result or None."""
        sql = ("SELECT payload, held_at FROM held_chunks "
               "WHERE source_id = ? AND chunk_index = ?")  # fmt: skip
        row = await self._db.read(lambda c: c.execute(sql, (source_id, chunk_index)).fetchone())
        if row is None:
            return None
        return HeldChunk(source_id=source_id, chunk_index=chunk_index,
                         payload=json.loads(row[0]), held_at=row[1])  # fmt: skip

    async def held_indexes(self, source_id: str) -> list[int]:
        """Held chunk indexes, ascending."""
        sql = "SELECT chunk_index FROM held_chunks WHERE source_id = ? ORDER BY chunk_index"
        rows = await self._db.read(lambda c: c.execute(sql, (source_id,)).fetchall())
        return [int(r[0]) for r in rows]

    async def release(self, source_id: str, chunk_index: int) -> bool:
        """Forget a held chunk result."""
        sql = "DELETE FROM held_chunks WHERE source_id = ? AND chunk_index = ?"
        return await self._db.write(lambda c: c.execute(sql, (source_id, chunk_index)).rowcount > 0)

    async def add_relations(self, relations: Iterable[PendingRelation]) -> int:
        """Insert pending relations, ignoring repeats."""
        now = to_text(utcnow())
        rows = [(*p.identity, p.relation.description, to_text(p.added_at) or now)
                for p in relations]  # fmt: skip
        sql = (f"INSERT INTO pending_relations ({_REL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) "
               "ON CONFLICT DO NOTHING")  # fmt: skip

        def run(conn: sqlite3.Connection) -> int:
            return sum(conn.execute(sql, row).rowcount for row in rows)

        return await self._db.write(run) if rows else 0

    async def relations_of(self, source_id: str) -> list[PendingRelation]:
        """A source's pending relations."""
        need(source_id, "pending relations need a source id")
        sql = f"SELECT {_REL_COLUMNS} FROM pending_relations WHERE source_id = ? {_REL_ORDER}"
        rows = await self._db.read(lambda c: c.execute(sql, (source_id,)).fetchall())
        return [_relation(r) for r in rows]

    async def relations_touching(self, topic_ids: Iterable[str]) -> list[PendingRelation]:
        """Pending relations with an endpoint among the ids (both endpoint indexes are used)."""
        ids = dumps(sorted(set(topic_ids)))
        sql = (f"SELECT {_REL_COLUMNS} FROM pending_relations WHERE source IN "
               "(SELECT value FROM json_each(:ids)) UNION SELECT "
               f"{_REL_COLUMNS} FROM pending_relations WHERE target IN "
               f"(SELECT value FROM json_each(:ids)) {_REL_ORDER}")  # fmt: skip
        rows = await self._db.read(lambda c: c.execute(sql, {"ids": ids}).fetchall())
        return [_relation(r) for r in rows]

    async def all_relations(self, *, limit: int = 1000) -> list[PendingRelation]:
        """Every source's pending relations, longest waiting first, at most `limit`."""
        sql = (f"SELECT {_REL_COLUMNS} FROM pending_relations ORDER BY added_at, source_id, "
               "chunk_index, source, target, type LIMIT ?")  # fmt: skip
        rows = await self._db.read(lambda c: c.execute(sql, (max(limit, 0),)).fetchall())
        return [_relation(r) for r in rows]

    async def count_relations(self) -> int:
        """How many pending relations wait, over every source."""
        sql = "SELECT count(*) FROM pending_relations"
        return int((await self._db.read(lambda c: c.execute(sql).fetchone()))[0])

    async def remove_relations(self, relations: Iterable[PendingRelation]) -> int:
        """Delete pending relations by identity."""
        keys = [p.identity for p in relations]

        def run(conn: sqlite3.Connection) -> int:
            sql = f"DELETE FROM pending_relations WHERE {_REL_KEY}"
            return sum(conn.execute(sql, key).rowcount for key in keys)

        return await self._db.write(run) if keys else 0

    async def clear(self, source_id: str) -> tuple[int, int]:
        """Delete a source's held chunks and pending relations."""

        def run(conn: sqlite3.Connection) -> tuple[int, int]:
            chunks = conn.execute("DELETE FROM held_chunks WHERE source_id = ?", (source_id,))
            rels = conn.execute("DELETE FROM pending_relations WHERE source_id = ?", (source_id,))
            return chunks.rowcount, rels.rowcount

        return await self._db.write(run)
