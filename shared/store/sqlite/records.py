"""SQLite held extractions, handbook tree cache, kb version, current sources, conversation refs."""

from __future__ import annotations

import builtins
import json
import sqlite3
from collections.abc import Callable
from typing import Any

from shared.errors import BadInputError
from shared.store._common import need, utcnow
from shared.store.models_records import ConversationRef, HandbookTree, HeldChange
from shared.store.sqlite.db import SqliteDb, dumps, to_text

RECORDS_SCHEMA = """
CREATE TABLE IF NOT EXISTS held_changes (
    key TEXT PRIMARY KEY,
    asserter TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    record TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS handbook_trees (
    "where" TEXT NOT NULL,
    path TEXT NOT NULL,
    etag TEXT,
    files TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY ("where", path)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS kb_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    hash TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS current_sources (
    name TEXT PRIMARY KEY,
    source_id TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS conversation_refs (
    surface TEXT NOT NULL,
    conversation_id TEXT NOT NULL,
    reference TEXT NOT NULL,
    user_id TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (surface, conversation_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS conversation_refs_user
    ON conversation_refs (surface, user_id, updated_at)
"""


def records_tables(conn: sqlite3.Connection) -> None:
    """Create the tables of held changes, tree caches, kb version, current sources, refs."""
    for statement in RECORDS_SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)


def held_row(held: HeldChange) -> tuple[str, str, str, str, str | None]:
    """The row of a held change (what is not a column is the JSON record)."""
    record = held.model_dump_json(include={"updated_ids", "changes", "topics", "relations"})
    return (held.key, held.asserter, held.reason, record, to_text(held.created_at or utcnow()))


def _held(row: tuple[Any, ...]) -> HeldChange:
    key, asserter, reason, record, created_at = row
    data = {"key": key, "asserter": asserter, "reason": reason, "created_at": created_at}
    return HeldChange.model_validate({**data, **json.loads(record)})


_HELD = "SELECT key, asserter, reason, record, created_at FROM held_changes"


class SqliteHeldChanges:
    """HeldChangeRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def put(self, held: HeldChange) -> HeldChange:
        """Hold a change (a held key again replaces it)."""
        stored = held.model_copy(update={"created_at": held.created_at or utcnow()})
        sql = "INSERT OR REPLACE INTO held_changes VALUES (?, ?, ?, ?, ?)"
        params = held_row(stored)
        await self._db.write(lambda c: c.execute(sql, params))
        return stored

    async def get(self, key: str) -> HeldChange | None:
        """One held change or None."""
        row = await self._db.read(lambda c: c.execute(f"{_HELD} WHERE key = ?", (key,)).fetchone())
        return _held(row) if row else None

    async def list(self) -> builtins.list[HeldChange]:
        """Every held change, by key."""
        rows = await self._db.read(lambda c: c.execute(f"{_HELD} ORDER BY key").fetchall())
        return [_held(r) for r in rows]

    async def take(self, key: str) -> HeldChange | None:
        """Remove and return a held change (once)."""
        sql = "DELETE FROM held_changes WHERE key = ? RETURNING key, asserter, reason, record, "
        sql += "created_at"
        row = await self._db.write(lambda c: c.execute(sql, (key,)).fetchone())
        return _held(row) if row else None


class SqliteHandbookTrees:
    """HandbookTreeRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def get(self, where: str, path: str) -> HandbookTree | None:
        """The cached listing of one repository folder, or None."""
        sql = 'SELECT etag, files, updated_at FROM handbook_trees WHERE "where" = ? AND path = ?'
        row = await self._db.read(lambda c: c.execute(sql, (where, path)).fetchone())
        if not row:
            return None
        return HandbookTree(where=where, path=path, etag=row[0], files=json.loads(row[1]),
                            updated_at=row[2])  # fmt: skip

    async def put(self, tree: HandbookTree) -> None:
        """Cache (or replace) a folder's listing."""
        sql = "INSERT OR REPLACE INTO handbook_trees VALUES (?, ?, ?, ?, ?)"
        params = (tree.where, tree.path, tree.etag, dumps(tree.files), to_text(utcnow()))
        await self._db.write(lambda c: c.execute(sql, params))

    async def clear(self) -> int:
        """Forget every cached listing."""
        return await self._db.write(lambda c: c.execute("DELETE FROM handbook_trees").rowcount)


class SqliteKbVersion:
    """KbVersionRepository on SQLite (the write transaction makes advance atomic)."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def get(self) -> str | None:
        """The current hash, or None before the first change."""
        row = await self._db.read(
            lambda c: c.execute("SELECT hash FROM kb_version WHERE id = 1").fetchone()
        )
        return str(row[0]) if row else None

    async def advance(self, step: Callable[[str], str], *, initial: str | None = None) -> str:
        """Atomically store step(current or initial) and return it."""

        def run(conn: sqlite3.Connection) -> str:
            row = conn.execute("SELECT hash FROM kb_version WHERE id = 1").fetchone()
            current = str(row[0]) if row else initial
            if current is None:
                raise BadInputError("the kb version has no hash yet: give the initial one")
            new = need(step(current), "a kb version hash must not be empty")
            conn.execute(
                "INSERT OR REPLACE INTO kb_version (id, hash, updated_at) VALUES (1, ?, ?)",
                (new, to_text(utcnow())),
            )
            return new

        return await self._db.write(run)


class SqliteCurrentSources:
    """CurrentSourceRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def get(self, name: str) -> str | None:
        """The current source id of a document, or None."""
        sql = "SELECT source_id FROM current_sources WHERE name = ?"
        row = await self._db.read(lambda c: c.execute(sql, (name,)).fetchone())
        return str(row[0]) if row else None

    async def swap(self, name: str, source_id: str) -> str | None:
        """Make source_id current for name; returns the previous source id."""
        need(name, "a document needs a name")
        need(source_id, "a current source needs an id")

        def run(conn: sqlite3.Connection) -> str | None:
            row = conn.execute(
                "SELECT source_id FROM current_sources WHERE name = ?", (name,)
            ).fetchone()
            conn.execute(
                "INSERT OR REPLACE INTO current_sources (name, source_id, updated_at) "
                "VALUES (?, ?, ?)",
                (name, source_id, to_text(utcnow())),
            )
            return str(row[0]) if row else None

        return await self._db.write(run)

    async def clear(self, name: str, source_id: str) -> bool:
        """Forget the name only while source_id is its current source."""
        sql = "DELETE FROM current_sources WHERE name = ? AND source_id = ?"
        return await self._db.write(lambda c: c.execute(sql, (name, source_id)).rowcount > 0)


_REFS = "SELECT surface, conversation_id, reference, user_id, updated_at FROM conversation_refs"


def _ref(row: tuple[Any, ...]) -> ConversationRef:
    surface, conversation_id, reference, user_id, updated_at = row
    return ConversationRef(surface=surface, conversation_id=conversation_id,
                           reference=json.loads(reference), user_id=user_id,
                           updated_at=updated_at)  # fmt: skip


def ref_row(ref: ConversationRef) -> tuple[Any, ...]:
    """The row of a conversation reference."""
    return (ref.surface, ref.conversation_id, dumps(ref.reference), ref.user_id,
            to_text(ref.updated_at or utcnow()))  # fmt: skip


class SqliteConversationRefs:
    """ConversationRefRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def put(self, ref: ConversationRef) -> None:
        """Remember (or replace) the reference of a conversation."""
        params = ref_row(ref.model_copy(update={"updated_at": utcnow()}))
        sql = "INSERT OR REPLACE INTO conversation_refs VALUES (?, ?, ?, ?, ?)"
        await self._db.write(lambda c: c.execute(sql, params))

    async def get(self, surface: str, conversation_id: str) -> ConversationRef | None:
        """The stored reference of a conversation."""
        sql = f"{_REFS} WHERE surface = ? AND conversation_id = ?"
        row = await self._db.read(lambda c: c.execute(sql, (surface, conversation_id)).fetchone())
        return _ref(row) if row else None

    async def personal(self, surface: str, user_id: str) -> ConversationRef | None:
        """The user's newest personal chat with the bot."""
        sql = f"{_REFS} WHERE surface = ? AND user_id = ? ORDER BY updated_at DESC LIMIT 1"
        row = await self._db.read(lambda c: c.execute(sql, (surface, user_id)).fetchone())
        return _ref(row) if row else None

    async def list(self, surface: str) -> builtins.list[ConversationRef]:
        """Every reference of a surface, by conversation id."""
        sql = f"{_REFS} WHERE surface = ? ORDER BY conversation_id"
        return [
            _ref(r) for r in await self._db.read(lambda c: c.execute(sql, (surface,)).fetchall())
        ]
