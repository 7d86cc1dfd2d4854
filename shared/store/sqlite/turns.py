"""SQLite chat turns: what each recent answer was made of, until it expires."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import Any

from shared.store._common import utcnow
from shared.store.models_state import ChatTurn
from shared.store.sqlite.db import SqliteDb, dumps, to_text

TURNS_SCHEMA = """
CREATE TABLE IF NOT EXISTS turns (
    turn_id TEXT PRIMARY KEY,
    user TEXT NOT NULL,
    question TEXT NOT NULL DEFAULT '',
    topic_ids TEXT NOT NULL DEFAULT '[]',
    answer TEXT NOT NULL DEFAULT '',
    model TEXT,
    prompt_version TEXT,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS turns_expires ON turns (expires_at);
"""

_FIELDS = (
    "turn_id", "user", "question", "topic_ids", "answer", "model", "prompt_version",
    "created_at", "expires_at", "kb_miss",
)  # fmt: skip
_COLUMNS = ", ".join(_FIELDS)


# Folded phrases by which R42 said "not in the KB" before turns carried kb_miss (migration 15).
LEGACY_MISS_PHRASES = (
    "staat niet in de kennisgraaf",
    "niet in de kennisgraaf staat",
    "not in the knowledge graph",
    "kon hier geen antwoord op formuleren",
)


def turns_kb_miss(conn: sqlite3.Connection) -> None:
    """Add turns.kb_miss; turns stored before it get it from R42's fixed wording."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(turns)")}
    if "kb_miss" not in columns:
        conn.execute("ALTER TABLE turns ADD COLUMN kb_miss INTEGER NOT NULL DEFAULT 0")
    where = " OR ".join("lower(answer) LIKE ?" for _ in LEGACY_MISS_PHRASES)
    conn.execute(
        f"UPDATE turns SET kb_miss = 1 WHERE {where}", [f"%{p}%" for p in LEGACY_MISS_PHRASES]
    )


def turns_table(conn: sqlite3.Connection) -> None:
    """Create the turns table and its expiry index (idempotent)."""
    for statement in TURNS_SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)


def turn_row(turn: ChatTurn) -> dict[str, Any]:
    """A dated turn as the columns migration 8 created (kb_miss came with migration 15)."""
    data = turn.model_dump(exclude={"kb_miss"})
    data.update(
        topic_ids=dumps(turn.topic_ids),
        created_at=to_text(turn.created_at),
        expires_at=to_text(turn.expires_at),
    )
    return data


def _turn(row: tuple[Any, ...]) -> ChatTurn:
    data = dict(zip(_FIELDS, row, strict=True))
    data["topic_ids"] = json.loads(data["topic_ids"])
    return ChatTurn.model_validate(data)


class SqliteTurns:
    """TurnRepository on SQLite; each put also drops the turns that have expired."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def put(self, turn: ChatTurn, *, now: datetime | None = None) -> ChatTurn:
        """Remember (or replace) a turn; expired turns are dropped in the same write."""
        moment = now or utcnow()
        stored = turn.dated(moment)
        row = {**turn_row(stored), "kb_miss": int(stored.kb_miss)}
        params = tuple(row[f] for f in _FIELDS)
        sql = f"INSERT OR REPLACE INTO turns ({_COLUMNS}) VALUES ({', '.join('?' * len(_FIELDS))})"

        def run(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM turns WHERE expires_at <= ?", (to_text(moment),))
            conn.execute(sql, params)

        await self._db.write(run)
        return stored

    async def get(self, turn_id: str, *, now: datetime | None = None) -> ChatTurn | None:
        """A turn that has not expired, or None."""
        sql = f"SELECT {_COLUMNS} FROM turns WHERE turn_id = ? AND expires_at > ?"
        params = (turn_id, to_text(now or utcnow()))
        row = await self._db.read(lambda c: c.execute(sql, params).fetchone())
        return _turn(row) if row else None

    async def prune(self, *, now: datetime | None = None) -> int:
        """Delete expired turns; how many went."""
        params = (to_text(now or utcnow()),)
        sql = "DELETE FROM turns WHERE expires_at <= ?"
        return await self._db.write(lambda c: c.execute(sql, params).rowcount)

    async def recent(
        self, *, since: datetime | None = None, limit: int = 100, now: datetime | None = None
    ) -> list[ChatTurn]:
        """Turns put at or after `since` that have not expired, newest first."""
        sql = f"SELECT {_COLUMNS} FROM turns WHERE expires_at > ? AND created_at >= ?"
        sql += " ORDER BY created_at DESC, turn_id LIMIT ?"
        floor = to_text(since) if since is not None else ""
        params = (to_text(now or utcnow()), floor, max(limit, 0))
        rows = await self._db.read(lambda c: c.execute(sql, params).fetchall())
        return [_turn(row) for row in rows]
