"""SQLite merge progress, custom topics and flags."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from shared.store._common import need, utcnow
from shared.store.models_state import CustomTopic, Flag, MergeProgress, check_increments
from shared.store.sqlite.db import SqliteDb, dumps, to_text

_COUNTS = ("topics_added", "topics_updated", "relations_added", "relations_dropped")
_PROGRESS_COLUMNS = f"source_id, {', '.join(_COUNTS)}, changed_ids, updated_at"
_CUSTOM_FIELDS = (
    "id", "label", "description", "type", "learning_relevance", "requested_as", "requested_by",
    "prompt_version", "offline", "suggestion_id", "created_at",
)  # fmt: skip
_CUSTOM_COLUMNS = ", ".join(_CUSTOM_FIELDS)


def _progress(row: tuple[Any, ...]) -> MergeProgress:
    data = dict(zip(_PROGRESS_COLUMNS.split(", "), row, strict=True))
    data["changed_ids"] = json.loads(data["changed_ids"])
    return MergeProgress.model_validate(data)


def _custom(row: tuple[Any, ...]) -> CustomTopic:
    data = dict(zip(_CUSTOM_FIELDS, row, strict=True))
    data["offline"] = bool(data["offline"])
    return CustomTopic.model_validate(data)


def merged_ids(current: list[str], new: Iterable[str], cap: int) -> list[str]:
    """current plus the new ids it lacks, first-seen order, at most cap."""
    ids = list(current)
    seen = set(ids)
    for topic_id in new:
        if topic_id not in seen:
            seen.add(topic_id)
            ids.append(topic_id)
    return ids[: max(cap, 0)]


class SqliteMergeProgress:
    """MergeProgressRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def add(
        self,
        source_id: str,
        *,
        changed_ids: Iterable[str] = (),
        topics_added: int = 0,
        topics_updated: int = 0,
        relations_added: int = 0,
        relations_dropped: int = 0,
        max_changed_ids: int = 500,
    ) -> MergeProgress:
        """Add one chunk's counts in one write transaction."""
        need(source_id, "merge progress needs a source id")
        increments = (topics_added, topics_updated, relations_added, relations_dropped)
        check_increments(*increments)
        new_ids = list(changed_ids)

        def run(conn: sqlite3.Connection) -> Any:
            row = conn.execute(
                "SELECT changed_ids FROM merge_progress WHERE source_id = ?", (source_id,)
            ).fetchone()
            ids = merged_ids(json.loads(row[0]) if row else [], new_ids, max_changed_ids)
            bumps = ", ".join(f"{c} = {c} + excluded.{c}" for c in _COUNTS)
            conn.execute(
                f"INSERT INTO merge_progress ({_PROGRESS_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) "
                f"ON CONFLICT (source_id) DO UPDATE SET {bumps}, "
                "changed_ids = excluded.changed_ids, updated_at = excluded.updated_at",
                (source_id, *increments, dumps(ids), to_text(utcnow())),
            )
            return conn.execute(
                f"SELECT {_PROGRESS_COLUMNS} FROM merge_progress WHERE source_id = ?",
                (source_id,),
            ).fetchone()

        return _progress(await self._db.write(run))

    async def get(self, source_id: str) -> MergeProgress:
        """The counts so far (zeros when nothing was merged)."""
        sql = f"SELECT {_PROGRESS_COLUMNS} FROM merge_progress WHERE source_id = ?"
        row = await self._db.read(lambda c: c.execute(sql, (source_id,)).fetchone())
        return _progress(row) if row else MergeProgress(source_id=source_id)

    async def delete(self, source_id: str) -> bool:
        """Forget a source's counts."""
        sql = "DELETE FROM merge_progress WHERE source_id = ?"
        return await self._db.write(lambda c: c.execute(sql, (source_id,)).rowcount > 0)


class SqliteCustomTopics:
    """CustomTopicRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def add(self, topic: CustomTopic) -> bool:
        """Insert a topic; False when its id is taken."""
        data = topic.model_dump()
        data.update(offline=int(topic.offline), created_at=to_text(topic.created_at or utcnow()))
        params = tuple(data[f] for f in _CUSTOM_FIELDS)
        sql = (
            f"INSERT OR IGNORE INTO custom_topics ({_CUSTOM_COLUMNS}) "
            f"VALUES ({', '.join('?' * len(_CUSTOM_FIELDS))})"
        )
        return await self._db.write(lambda c: c.execute(sql, params).rowcount > 0)

    async def get(self, topic_id: str) -> CustomTopic | None:
        """One custom topic or None."""
        sql = f"SELECT {_CUSTOM_COLUMNS} FROM custom_topics WHERE id = ?"
        row = await self._db.read(lambda c: c.execute(sql, (topic_id,)).fetchone())
        return _custom(row) if row else None

    async def list(self) -> list[CustomTopic]:
        """Every custom topic, by id."""
        sql = f"SELECT {_CUSTOM_COLUMNS} FROM custom_topics ORDER BY id"
        return [_custom(r) for r in await self._db.read(lambda c: c.execute(sql).fetchall())]

    async def ids(self) -> set[str]:
        """Every custom topic id."""
        rows = await self._db.read(lambda c: c.execute("SELECT id FROM custom_topics").fetchall())
        return {r[0] for r in rows}

    async def delete(self, topic_id: str) -> bool:
        """Remove a custom topic."""
        sql = "DELETE FROM custom_topics WHERE id = ?"
        return await self._db.write(lambda c: c.execute(sql, (topic_id,)).rowcount > 0)


class SqliteFlags:
    """FlagRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def get(self, name: str) -> Flag | None:
        """A flag or None when unset."""
        sql = "SELECT name, value, updated_at FROM flags WHERE name = ?"
        row = await self._db.read(lambda c: c.execute(sql, (name,)).fetchone())
        return Flag(name=row[0], value=json.loads(row[1]), updated_at=row[2]) if row else None

    async def set(self, name: str, value: dict[str, Any] | None = None) -> Flag:
        """Set (or replace) a flag."""
        flag = Flag(name=need(name, "a flag needs a name"), value=value or {}, updated_at=utcnow())
        sql = "INSERT OR REPLACE INTO flags (name, value, updated_at) VALUES (?, ?, ?)"
        params = (flag.name, dumps(flag.value), to_text(flag.updated_at))
        await self._db.write(lambda c: c.execute(sql, params))
        return flag

    async def set_if_absent(self, name: str, value: dict[str, Any] | None = None) -> bool:
        """Set a flag unless it is set; True if this call set it."""
        params = (need(name, "a flag needs a name"), dumps(value or {}), to_text(utcnow()))
        sql = "INSERT OR IGNORE INTO flags (name, value, updated_at) VALUES (?, ?, ?)"
        return await self._db.write(lambda c: c.execute(sql, params).rowcount > 0)

    async def delete(self, name: str) -> bool:
        """Unset a flag."""
        sql = "DELETE FROM flags WHERE name = ?"
        return await self._db.write(lambda c: c.execute(sql, (name,)).rowcount > 0)
