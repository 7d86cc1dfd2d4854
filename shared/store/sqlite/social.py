"""SQLite chat threads (capped per user) and graph suggestions (decided once)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from shared.errors import BadInputError, NotFoundError
from shared.store._common import utcnow
from shared.store.models import Suggestion, SuggestionStatus
from shared.store.models_learning import THREAD_MAX_MESSAGES, ThreadMessage
from shared.store.sqlite.db import SqliteDb, dumps, to_text

_SUGGESTION_COLUMNS = "id, delta, proposed_by, status, decided_by, decided_at, context, created_at"


def _suggestion(row: tuple[Any, ...]) -> Suggestion:
    data = dict(zip(_SUGGESTION_COLUMNS.split(", "), row, strict=True))
    data["delta"] = json.loads(data["delta"])
    data["context"] = json.loads(data["context"])
    return Suggestion.model_validate(data)


class SqliteThreads:
    """ThreadRepository on SQLite: one row per message, trimmed in the same transaction."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def append(self, user: str, messages: Iterable[ThreadMessage]) -> None:
        """Append messages, keeping only the newest THREAD_MAX_MESSAGES."""
        if not user:
            raise BadInputError("a thread needs a user id")
        rows = [(user, m.role, m.text, to_text(m.at)) for m in messages]

        def run(conn: sqlite3.Connection) -> None:
            conn.executemany(
                "INSERT INTO thread_messages (user, role, text, at) VALUES (?, ?, ?, ?)", rows
            )
            conn.execute(
                "DELETE FROM thread_messages WHERE user = :user AND id <= (SELECT id FROM "
                "thread_messages WHERE user = :user ORDER BY id DESC LIMIT 1 OFFSET :keep)",
                {"user": user, "keep": THREAD_MAX_MESSAGES},
            )

        await self._db.write(run)

    async def get(self, user: str) -> list[ThreadMessage]:
        """A user's messages, oldest first."""
        sql = "SELECT role, text, at FROM thread_messages WHERE user = ? ORDER BY id"
        rows = await self._db.read(lambda c: c.execute(sql, (user,)).fetchall())
        return [ThreadMessage(role=r[0], text=r[1], at=r[2]) for r in rows]

    async def clear(self, user: str) -> int:
        """Forget a user's history; returns messages removed."""
        sql = "DELETE FROM thread_messages WHERE user = ?"
        return await self._db.write(lambda c: c.execute(sql, (user,)).rowcount)


class SqliteSuggestions:
    """SuggestionRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def create(self, suggestion: Suggestion) -> Suggestion:
        """Store a pending suggestion (an existing id returns the stored one)."""
        params = (
            suggestion.id,
            dumps(suggestion.delta),
            suggestion.proposed_by,
            suggestion.status,
            suggestion.decided_by,
            to_text(suggestion.decided_at),
            dumps(suggestion.context),
            to_text(suggestion.created_at or utcnow()),
        )

        def run(conn: sqlite3.Connection) -> Any:
            conn.execute(
                f"INSERT OR IGNORE INTO suggestions ({_SUGGESTION_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                params,
            )
            return conn.execute(
                f"SELECT {_SUGGESTION_COLUMNS} FROM suggestions WHERE id = ?", (suggestion.id,)
            ).fetchone()

        return _suggestion(await self._db.write(run))

    async def get(self, suggestion_id: str) -> Suggestion | None:
        """One suggestion or None."""
        sql = f"SELECT {_SUGGESTION_COLUMNS} FROM suggestions WHERE id = ?"
        row = await self._db.read(lambda c: c.execute(sql, (suggestion_id,)).fetchone())
        return _suggestion(row) if row else None

    async def list(
        self, *, status: SuggestionStatus | None = None, limit: int = 100
    ) -> list[Suggestion]:
        """Suggestions, newest first."""
        where = "WHERE status = ?" if status else ""
        params: tuple[Any, ...] = (status, limit) if status else (limit,)
        sql = (
            f"SELECT {_SUGGESTION_COLUMNS} FROM suggestions {where} "
            "ORDER BY created_at DESC, id LIMIT ?"
        )
        rows = await self._db.read(lambda c: c.execute(sql, params).fetchall())
        return [_suggestion(r) for r in rows]

    async def decide(
        self, suggestion_id: str, *, approve: bool, by: str, now: datetime | None = None
    ) -> Suggestion | None:
        """Compare-and-set from pending; None when it had already been decided."""
        if not by:
            raise BadInputError("a decision needs the deciding admin's id")
        params = (
            "approved" if approve else "rejected",
            by,
            to_text(now or utcnow()),
            suggestion_id,
        )

        def run(conn: sqlite3.Connection) -> Any:
            changed = conn.execute(
                "UPDATE suggestions SET status = ?, decided_by = ?, decided_at = ? "
                "WHERE id = ? AND status = 'pending'",
                params,
            ).rowcount
            row = conn.execute(
                f"SELECT {_SUGGESTION_COLUMNS} FROM suggestions WHERE id = ?", (suggestion_id,)
            ).fetchone()
            if row is None:
                raise NotFoundError(f"suggestion {suggestion_id!r} does not exist")
            return row if changed else None

        row = await self._db.write(run)
        return _suggestion(row) if row else None
