"""SQLite LLM call telemetry, handbook sync state and curriculum."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from shared.errors import BadInputError
from shared.store._common import build, utcnow
from shared.store.models import HandbookSyncState
from shared.store.models_learning import CallAggregate, CurriculumEntry, LlmCall
from shared.store.models_telemetry import LLMCallRecord
from shared.store.sqlite.db import SqliteDb, to_text

_CALL_FIELDS = (
    "id", "occurred_at", "task", "model", "tier", "provider", "duration_ms", "input_tokens",
    "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "stop_reason",
    "ok", "error_msg", "cost_usd", "request_id",
)  # fmt: skip
_CALL_COLUMNS = ", ".join(_CALL_FIELDS)
_GROUP_COLUMNS = {"task": "task", "model": "model"}


class SqliteLlmCalls:
    """LlmCallRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def add(self, record: LLMCallRecord, *, call_id: str | None = None) -> str:
        """Store a record; idempotent by call_id."""
        call_id = call_id or uuid.uuid4().hex
        data = record.model_dump()
        data["id"] = call_id
        data["occurred_at"] = to_text(record.occurred_at)
        data["ok"] = int(record.ok)
        params = tuple(data[f] for f in _CALL_FIELDS)
        placeholders = ", ".join("?" * len(_CALL_FIELDS))
        sql = f"INSERT OR IGNORE INTO llm_calls ({_CALL_COLUMNS}) VALUES ({placeholders})"
        await self._db.write(lambda c: c.execute(sql, params))
        return call_id

    async def last(self, n: int = 20) -> list[LlmCall]:
        """The newest n calls, newest first."""
        sql = f"SELECT {_CALL_COLUMNS} FROM llm_calls ORDER BY occurred_at DESC, id LIMIT ?"
        rows = await self._db.read(lambda c: c.execute(sql, (max(n, 0),)).fetchall())
        return [
            LlmCall.model_validate({**dict(zip(_CALL_FIELDS, r, strict=True)), "ok": bool(r[12])})
            for r in rows
        ]

    async def aggregate(
        self, *, by: Literal["task", "model"], since: datetime | None = None
    ) -> list[CallAggregate]:
        """Totals per task or per model, highest cost first."""
        column = _GROUP_COLUMNS.get(by)
        if column is None:
            raise BadInputError(f"aggregate by task or model, not {by!r}")
        sql = (
            f"SELECT {column}, count(*), sum(1 - ok), sum(input_tokens), sum(output_tokens), "
            "sum(cache_creation_input_tokens), sum(cache_read_input_tokens), sum(cost_usd), "
            f"sum(duration_ms) FROM llm_calls WHERE occurred_at >= ? GROUP BY {column} "
            f"ORDER BY sum(cost_usd) DESC, {column}"
        )
        params = (to_text(since) if since else "",)
        rows = await self._db.read(lambda c: c.execute(sql, params).fetchall())
        names = list(CallAggregate.model_fields)
        return [CallAggregate.model_validate(dict(zip(names, r, strict=True))) for r in rows]

    async def count(self) -> int:
        """How many calls are stored."""
        return await self._db.read(
            lambda c: c.execute("SELECT count(*) FROM llm_calls").fetchone()[0]
        )


class SqliteHandbookSync:
    """HandbookSyncRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def get(self, path: str) -> HandbookSyncState | None:
        """The state of one path."""
        sql = "SELECT path, sha, updated_at FROM handbook_sync_state WHERE path = ?"
        row = await self._db.read(lambda c: c.execute(sql, (path,)).fetchone())
        return HandbookSyncState(path=row[0], sha=row[1], updated_at=row[2]) if row else None

    async def put(self, path: str, sha: str) -> None:
        """Record the sha ingested for a path."""
        build(HandbookSyncState, path=path, sha=sha)
        sql = (
            "INSERT INTO handbook_sync_state (path, sha, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT (path) DO UPDATE SET sha = excluded.sha, updated_at = excluded.updated_at"
        )
        params = (path, sha, to_text(utcnow()))
        await self._db.write(lambda c: c.execute(sql, params))

    async def all(self) -> dict[str, str]:
        """path -> sha for every path."""
        sql = "SELECT path, sha FROM handbook_sync_state ORDER BY path"
        return await self._db.read(lambda c: dict(c.execute(sql)))

    async def delete(self, path: str) -> bool:
        """Forget a path."""
        sql = "DELETE FROM handbook_sync_state WHERE path = ?"
        return await self._db.write(lambda c: c.execute(sql, (path,)).rowcount > 0)


class SqliteCurriculum:
    """CurriculumRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def set(self, week: str, topic_id: str) -> None:
        """Schedule a topic for a week."""
        build(CurriculumEntry, week=week, topic_id=topic_id)
        sql = (
            "INSERT INTO curriculum (week, topic_id, updated_at) VALUES (?, ?, ?) ON CONFLICT "
            "(week) DO UPDATE SET topic_id = excluded.topic_id, updated_at = excluded.updated_at"
        )
        params = (week, topic_id, to_text(utcnow()))
        await self._db.write(lambda c: c.execute(sql, params))

    async def get(self, week: str) -> str | None:
        """The topic of a week."""
        sql = "SELECT topic_id FROM curriculum WHERE week = ?"
        row = await self._db.read(lambda c: c.execute(sql, (week,)).fetchone())
        return row[0] if row else None

    async def all(self) -> list[CurriculumEntry]:
        """The whole schedule, by week."""
        sql = "SELECT week, topic_id FROM curriculum ORDER BY week"
        rows = await self._db.read(lambda c: c.execute(sql).fetchall())
        return [CurriculumEntry(week=r[0], topic_id=r[1]) for r in rows]

    async def delete(self, week: str) -> bool:
        """Unschedule a week."""
        sql = "DELETE FROM curriculum WHERE week = ?"
        return await self._db.write(lambda c: c.execute(sql, (week,)).rowcount > 0)
