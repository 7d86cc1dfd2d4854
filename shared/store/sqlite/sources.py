"""SQLite sources, their texts and the per-chunk merge record.

Chunk merge record: one `source_chunks` row per (source_id, chunk_index), inserted in the
same transaction as that chunk's graph changes (Store.apply_kb_changes with a ChunkMark).
A row therefore exists exactly when the chunk's changes are in the graph, so a restarted
extractor resumes at `first_unmerged_chunk` and a redelivered chunk is applied once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from typing import Any

from shared.errors import NotFoundError
from shared.store._common import utcnow
from shared.store.models import Source, SourceStatus
from shared.store.sqlite.db import SqliteDb, dumps, to_text

_COLUMNS = "id, name, sha256, status, error, chunks_done, chunks_total, who, created_at, updated_at"


def _source(row: tuple[Any, ...]) -> Source:
    return Source.model_validate(dict(zip(_COLUMNS.split(", "), row, strict=True)))


class SqliteSources:
    """SourceRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def create(self, source: Source) -> Source:
        """Insert a source; an existing id returns the stored one unchanged."""
        now = to_text(utcnow())

        def run(conn: sqlite3.Connection) -> Any:
            conn.execute(
                f"INSERT OR IGNORE INTO sources ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    source.id,
                    source.name,
                    source.sha256,
                    source.status,
                    source.error,
                    source.chunks_done,
                    source.chunks_total,
                    source.who,
                    to_text(source.created_at) or now,
                    now,
                ),
            )
            return conn.execute(
                f"SELECT {_COLUMNS} FROM sources WHERE id = ?", (source.id,)
            ).fetchone()

        return _source(await self._db.write(run))

    async def get(self, source_id: str) -> Source | None:
        """One source or None."""
        sql = f"SELECT {_COLUMNS} FROM sources WHERE id = ?"
        row = await self._db.read(lambda c: c.execute(sql, (source_id,)).fetchone())
        return _source(row) if row else None

    async def find_by_sha256(self, sha256: str) -> list[Source]:
        """Sources with this content hash, newest first."""
        sql = f"SELECT {_COLUMNS} FROM sources WHERE sha256 = ? ORDER BY created_at DESC, id"
        rows = await self._db.read(lambda c: c.execute(sql, (sha256,)).fetchall())
        return [_source(r) for r in rows]

    async def list(self, *, status: SourceStatus | None = None, limit: int = 100) -> list[Source]:
        """Sources, newest first."""
        where = "WHERE status = ?" if status else ""
        params: tuple[Any, ...] = (status, limit) if status else (limit,)
        sql = f"SELECT {_COLUMNS} FROM sources {where} ORDER BY created_at DESC, id LIMIT ?"
        rows = await self._db.read(lambda c: c.execute(sql, params).fetchall())
        return [_source(r) for r in rows]

    async def set_status(
        self,
        source_id: str,
        status: SourceStatus,
        *,
        error: str | None = None,
        only_from: Collection[SourceStatus] | None = None,
    ) -> Source | None:
        """Move a source to a status; with only_from a compare-and-set (None if refused)."""
        sql = "UPDATE sources SET status = ?, error = ?, updated_at = ? WHERE id = ?"
        params: list[Any] = [status, error, to_text(utcnow()), source_id]
        if only_from is not None:
            sql += " AND status IN (SELECT value FROM json_each(?))"
            params.append(dumps(sorted(only_from)))

        def run(conn: sqlite3.Connection) -> tuple[Any, ...] | None:
            changed = conn.execute(sql, params).rowcount
            row = conn.execute(
                f"SELECT {_COLUMNS} FROM sources WHERE id = ?", (source_id,)
            ).fetchone()
            if row is None:
                raise NotFoundError(f"source {source_id!r} does not exist")
            return row if changed else None

        row = await self._db.write(run)
        return _source(row) if row else None

    async def set_chunks_total(self, source_id: str, total: int) -> Source:
        """Record how many chunks the source was split into."""

        def run(conn: sqlite3.Connection) -> Any:
            conn.execute(
                "UPDATE sources SET chunks_total = ?, updated_at = ? WHERE id = ?",
                (total, to_text(utcnow()), source_id),
            )
            return conn.execute(
                f"SELECT {_COLUMNS} FROM sources WHERE id = ?", (source_id,)
            ).fetchone()

        row = await self._db.write(run)
        if row is None:
            raise NotFoundError(f"source {source_id!r} does not exist")
        return _source(row)

    async def merged_chunks(self, source_id: str) -> set[int]:
        """Indexes of the chunks whose graph changes have been applied."""
        sql = "SELECT chunk_index FROM source_chunks WHERE source_id = ?"
        rows = await self._db.read(lambda c: c.execute(sql, (source_id,)).fetchall())
        return {r[0] for r in rows}

    async def first_unmerged_chunk(self, source_id: str) -> int:
        """The lowest chunk index not yet merged."""
        merged = await self.merged_chunks(source_id)
        index = 0
        while index in merged:
            index += 1
        return index

    async def delete(self, source_id: str) -> bool:
        """Delete a source, its text and its chunk record."""

        def run(conn: sqlite3.Connection) -> bool:
            conn.execute("DELETE FROM source_chunks WHERE source_id = ?", (source_id,))
            conn.execute("DELETE FROM source_texts WHERE source_id = ?", (source_id,))
            return conn.execute("DELETE FROM sources WHERE id = ?", (source_id,)).rowcount > 0

        return await self._db.write(run)

    async def count_by_status(self) -> dict[str, int]:
        """Source totals per status."""
        sql = "SELECT status, count(*) FROM sources GROUP BY status"
        return await self._db.read(lambda c: dict(c.execute(sql)))


class SqliteSourceTexts:
    """SourceTextRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def put(self, source_id: str, text: str) -> None:
        """Store (or replace) a source's text."""
        sql = (
            "INSERT INTO source_texts (source_id, text, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (source_id) DO UPDATE SET text = excluded.text, "
            "updated_at = excluded.updated_at"
        )
        params = (source_id, text, to_text(utcnow()))
        await self._db.write(lambda c: c.execute(sql, params))

    async def get(self, source_id: str) -> str | None:
        """A source's text or None."""
        sql = "SELECT text FROM source_texts WHERE source_id = ?"
        row = await self._db.read(lambda c: c.execute(sql, (source_id,)).fetchone())
        return row[0] if row else None

    async def delete(self, source_id: str) -> bool:
        """Delete a source's text."""
        sql = "DELETE FROM source_texts WHERE source_id = ?"
        return await self._db.write(lambda c: c.execute(sql, (source_id,)).rowcount > 0)
