"""SQLite change log: the before-image of a graph change, written in its transaction."""

from __future__ import annotations

import builtins
import json
import sqlite3
from datetime import datetime
from typing import Any

from shared.store._common import need, utcnow
from shared.store.models import KbChanges, RelationKey, relation_subject
from shared.store.models_provenance import ChangeBatch, UndoLabel
from shared.store.sqlite.db import SqliteDb, dumps, to_text
from shared.store.sqlite.kb import relations_touching, select_relations, select_topics
from shared.store.sqlite.provenance import ASSERTION_COLUMNS, assertion_from_row


def log_before_image(conn: sqlite3.Connection, changes: KbChanges, undo: UndoLabel) -> bool:
    """Store the before-image of what changes touch; False if the batch was logged before."""
    if conn.execute("SELECT 1 FROM change_log WHERE id = ?", (undo.batch_id,)).fetchone():
        return False
    upserted = [t.id for t in changes.topics_upsert]
    topics = select_topics(conn, sorted(set(upserted) | set(changes.topics_delete)))
    found = {t.id for t in topics}
    cascaded = relations_touching(conn, sorted(set(changes.topics_delete) & found))
    keys = {r.key.as_tuple() for r in changes.relations_upsert}
    relations = {r.key.as_tuple(): r for r in cascaded}
    wanted = keys | {k.as_tuple() for k in changes.relations_delete}
    relations.update({r.key.as_tuple(): r for r in select_relations(conn, sorted(wanted))})
    deleted_topics = sorted(set(changes.topics_delete) & found)
    dropped = [relation_subject(r.key) for r in cascaded] + [
        relation_subject(k) for k in changes.relations_delete
    ]
    assertions = conn.execute(
        f"SELECT {ASSERTION_COLUMNS} FROM assertions WHERE (kind = 'topic' AND subject IN "
        "(SELECT value FROM json_each(?))) OR (kind = 'relation' AND subject IN "
        "(SELECT value FROM json_each(?)))",
        (dumps(deleted_topics), dumps(sorted(set(dropped)))),
    ).fetchall()
    batch = ChangeBatch(
        id=undo.batch_id,
        actor=undo.actor,
        reason=undo.reason,
        topics_before=topics,
        topics_absent=sorted(set(upserted) - found),
        relations_before=sorted(relations.values(), key=lambda r: r.key.as_tuple()),
        relations_absent=[RelationKey.model_validate(dict(zip(("source", "target", "type"), k,
                          strict=True))) for k in sorted(keys - set(relations))],
        assertions_before=[assertion_from_row(r) for r in assertions],
    )  # fmt: skip
    conn.execute(
        "INSERT INTO change_log (id, actor, reason, created_at, before) VALUES (?, ?, ?, ?, ?)",
        (batch.id, batch.actor, batch.reason, to_text(utcnow()), before_json(batch)),
    )
    return True


def before_json(batch: ChangeBatch) -> str:
    """The JSON of the before-image fields of a batch (the change_log.before column)."""
    fields = {"topics_before", "topics_absent", "relations_before", "relations_absent",
              "assertions_before"}  # fmt: skip
    return batch.model_dump_json(include=fields)


def _batch(row: tuple[Any, ...]) -> ChangeBatch:
    batch_id, actor, reason, created_at, before, undone_at, undone_by = row
    return ChangeBatch.model_validate(
        {"id": batch_id, "actor": actor, "reason": reason, "created_at": created_at,
         "undone_at": undone_at, "undone_by": undone_by, **json.loads(before)}
    )  # fmt: skip


class SqliteChangeLog:
    """ChangeLogRepository on SQLite."""

    _COLUMNS = "id, actor, reason, created_at, before, undone_at, undone_by"

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def record(self, batch: ChangeBatch) -> bool:
        """Log a before-image taken outside apply_kb_changes; False if its id is logged."""
        params = (batch.id, batch.actor, batch.reason, to_text(batch.created_at or utcnow()),
                  before_json(batch))  # fmt: skip
        sql = (
            "INSERT OR IGNORE INTO change_log (id, actor, reason, created_at, before) "
            "VALUES (?, ?, ?, ?, ?)"
        )
        return await self._db.write(lambda c: c.execute(sql, params).rowcount > 0)

    async def get(self, batch_id: str) -> ChangeBatch | None:
        """One logged change or None."""
        sql = f"SELECT {self._COLUMNS} FROM change_log WHERE id = ?"
        row = await self._db.read(lambda c: c.execute(sql, (batch_id,)).fetchone())
        return _batch(row) if row else None

    async def list(self, *, limit: int = 20) -> builtins.list[ChangeBatch]:
        """Logged changes, newest first."""
        sql = f"SELECT {self._COLUMNS} FROM change_log ORDER BY created_at DESC, id LIMIT ?"
        rows = await self._db.read(lambda c: c.execute(sql, (max(limit, 0),)).fetchall())
        return [_batch(r) for r in rows]

    async def mark_undone(
        self, batch_id: str, *, by: str, now: datetime | None = None
    ) -> ChangeBatch | None:
        """Record that a change was undone (once)."""
        need(by, "undoing needs the admin's id")
        params = (to_text(now or utcnow()), by, batch_id)

        def run(conn: sqlite3.Connection) -> Any:
            changed = conn.execute(
                "UPDATE change_log SET undone_at = ?, undone_by = ? "
                "WHERE id = ? AND undone_at IS NULL",
                params,
            ).rowcount
            if not changed:
                return None
            sql = f"SELECT {self._COLUMNS} FROM change_log WHERE id = ?"
            return conn.execute(sql, (batch_id,)).fetchone()

        row = await self._db.write(run)
        return _batch(row) if row else None
