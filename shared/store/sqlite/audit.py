"""SQLite audit trail (migration 10)."""

from __future__ import annotations

import sqlite3

from shared.store.audit_rows import check_limit, checked_entry
from shared.store.models_audit import AuditEntry
from shared.store.sqlite.db import SqliteDb, dumps, loads_or_none, to_text

AUDIT_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    allowed INTEGER NOT NULL,
    surface TEXT NOT NULL,
    before TEXT,
    after TEXT
);
CREATE INDEX IF NOT EXISTS audit_at ON audit (at, seq);
CREATE INDEX IF NOT EXISTS audit_actor ON audit (actor, at, seq);
"""

_COLUMNS = "at, actor, action, target, allowed, surface, before, after"


def audit_table(conn: sqlite3.Connection) -> None:
    """Migration 10: the audit table and its indexes (inside the migration's transaction)."""
    for statement in AUDIT_SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)


class SqliteAudit:
    """AuditRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def record(self, entry: AuditEntry) -> None:
        """Append one entry."""
        e = checked_entry(entry)
        params = (
            to_text(e.at),
            e.actor,
            e.action,
            e.target,
            int(e.allowed),
            e.surface,
            None if e.before is None else dumps(e.before),
            None if e.after is None else dumps(e.after),
        )
        sql = f"INSERT INTO audit ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        await self._db.write(lambda c: c.execute(sql, params))

    async def latest(self, *, limit: int = 50, actor: str | None = None) -> list[AuditEntry]:
        """The newest entries first (of one actor when given)."""
        limit = check_limit(limit)
        where, params = ("WHERE actor = ?", (actor, limit)) if actor is not None else ("", (limit,))
        sql = f"SELECT {_COLUMNS} FROM audit {where} ORDER BY at DESC, seq DESC LIMIT ?"
        rows = await self._db.read(lambda c: c.execute(sql, params).fetchall())
        return [
            AuditEntry.model_validate(
                {
                    "at": r[0],
                    "actor": r[1],
                    "action": r[2],
                    "target": r[3],
                    "allowed": bool(r[4]),
                    "surface": r[5],
                    "before": loads_or_none(r[6]),
                    "after": loads_or_none(r[7]),
                }
            )
            for r in rows
        ]
