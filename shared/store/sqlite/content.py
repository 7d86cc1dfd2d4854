"""SQLite content per topic and quiz banks."""

from __future__ import annotations

import builtins
import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from shared.errors import BadInputError
from shared.store._common import build, utcnow
from shared.store.fence import Fence
from shared.store.models_learning import CONTENT_KINDS, Content, ContentKind, QuizBank, QuizQuestion
from shared.store.sqlite.db import SqliteDb, dumps, loads_or_none, to_text

_COLUMNS = (
    "topic_id, article, slides, infographic, prompt_version, stale, generated_at, topic_fingerprint"
)


def _content(row: tuple[Any, ...]) -> Content:
    return Content.model_validate(
        {
            "topic_id": row[0],
            "article": loads_or_none(row[1]),
            "slides": loads_or_none(row[2]),
            "infographic": loads_or_none(row[3]),
            "prompt_version": row[4],
            "stale": bool(row[5]),
            "generated_at": row[6],
            "topic_fingerprint": row[7],
        }
    )


def holds(conn: sqlite3.Connection, fence: Fence) -> bool:
    """Whether the fence's owner still holds its lease (read inside the caller's write).

    A lapsed lease nobody took over is still its holder's (see LockRepository.renew).
    """
    sql = "SELECT 1 FROM locks WHERE name = ? AND owner = ?"
    return conn.execute(sql, (fence.name, fence.owner)).fetchone() is not None


def _dumps_or_none(value: dict[str, Any] | None) -> str | None:
    return None if value is None else dumps(value)


class SqliteContent:
    """ContentRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def get(self, topic_id: str) -> Content | None:
        """A topic's content or None."""
        sql = f"SELECT {_COLUMNS} FROM content WHERE topic_id = ?"
        row = await self._db.read(lambda c: c.execute(sql, (topic_id,)).fetchone())
        return _content(row) if row else None

    async def get_many(self, topic_ids: Iterable[str]) -> builtins.list[Content]:
        """The content of these topics that exists, in topic id order (one query)."""
        ids = dumps(sorted(set(topic_ids)))
        sql = (
            f"SELECT {_COLUMNS} FROM content WHERE topic_id IN (SELECT value FROM json_each(?)) "
            "ORDER BY topic_id"
        )
        rows = await self._db.read(lambda c: c.execute(sql, (ids,)).fetchall())
        return [_content(row) for row in rows]

    async def list(self) -> list[Content]:
        """Every topic's content, ordered by topic id (one read for indexing)."""
        sql = f"SELECT {_COLUMNS} FROM content ORDER BY topic_id"
        rows = await self._db.read(lambda c: c.execute(sql).fetchall())
        return [_content(row) for row in rows]

    async def put(self, content: Content) -> None:
        """Replace a topic's content."""
        params = (
            content.topic_id,
            _dumps_or_none(content.article),
            _dumps_or_none(content.slides),
            _dumps_or_none(content.infographic),
            content.prompt_version,
            int(content.stale),
            to_text(content.generated_at or utcnow()),
            content.topic_fingerprint,
        )
        sql = f"INSERT OR REPLACE INTO content ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
        await self._db.write(lambda c: c.execute(sql, params))

    async def set_part(
        self,
        topic_id: str,
        kind: ContentKind,
        value: dict[str, Any],
        *,
        prompt_version: str | None,
        topic_fingerprint: str | None,
        fence: Fence | None = None,
    ) -> Content:
        """Atomically set one part (clears stale, stamps generated_at); fenced: see the protocol."""
        if kind not in CONTENT_KINDS:
            raise BadInputError(f"unknown content kind {kind!r}; expected one of {CONTENT_KINDS}")
        build(Content, topic_id=topic_id, prompt_version=prompt_version, **{kind: value})
        # `kind` is whitelisted above, so it is safe as a column name.
        sql = (
            f"INSERT INTO content (topic_id, {kind}, prompt_version, stale, generated_at, "
            f"topic_fingerprint) VALUES (?, ?, ?, 0, ?, ?) ON CONFLICT (topic_id) DO UPDATE SET "
            f"{kind} = excluded.{kind}, prompt_version = excluded.prompt_version, stale = 0, "
            "generated_at = excluded.generated_at, topic_fingerprint = excluded.topic_fingerprint"
        )
        params = (topic_id, dumps(value), prompt_version, to_text(utcnow()), topic_fingerprint)

        def run(conn: sqlite3.Connection) -> Any:
            # In the write transaction: no other worker can take the lease over in between.
            if fence is not None and not holds(conn, fence):
                raise fence.lost()
            conn.execute(sql, params)
            return conn.execute(
                f"SELECT {_COLUMNS} FROM content WHERE topic_id = ?", (topic_id,)
            ).fetchone()

        return _content(await self._db.write(run))

    async def mark_stale(self, topic_ids: Iterable[str]) -> int:
        """Flag content of changed topics as stale; returns rows changed."""
        ids = dumps(sorted(set(topic_ids)))
        sql = (
            "UPDATE content SET stale = 1 WHERE stale = 0 "
            "AND topic_id IN (SELECT value FROM json_each(?))"
        )
        return await self._db.write(lambda c: c.execute(sql, (ids,)).rowcount)

    async def list_stale(self) -> builtins.list[str]:
        """Topic ids whose content is stale."""
        sql = "SELECT topic_id FROM content WHERE stale = 1 ORDER BY topic_id"
        return [r[0] for r in await self._db.read(lambda c: c.execute(sql).fetchall())]

    async def delete(self, topic_id: str) -> bool:
        """Delete a topic's content."""
        sql = "DELETE FROM content WHERE topic_id = ?"
        return await self._db.write(lambda c: c.execute(sql, (topic_id,)).rowcount > 0)


class SqliteQuizBanks:
    """QuizBankRepository on SQLite: one JSON document per topic, rewritten in a transaction."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def get(self, topic_id: str) -> QuizBank | None:
        """A topic's bank or None."""
        sql = "SELECT topic_id, questions, updated_at FROM quiz_banks WHERE topic_id = ?"
        row = await self._db.read(lambda c: c.execute(sql, (topic_id,)).fetchone())
        if row is None:
            return None
        return QuizBank.model_validate(
            {"topic_id": row[0], "questions": json.loads(row[1]), "updated_at": row[2]}
        )

    async def add_questions(
        self, topic_id: str, questions: Iterable[QuizQuestion]
    ) -> list[QuizQuestion]:
        """Append questions whose key is new to the bank; returns those added."""
        incoming = list(questions)

        def run(conn: sqlite3.Connection) -> list[QuizQuestion]:
            row = conn.execute(
                "SELECT questions FROM quiz_banks WHERE topic_id = ?", (topic_id,)
            ).fetchone()
            stored: list[dict[str, Any]] = json.loads(row[0]) if row else []
            seen = {q.get("key") for q in stored}
            added = []
            for question in incoming:
                if question.key not in seen:
                    seen.add(question.key)
                    added.append(question)
            if added or row is None:
                stored.extend(q.model_dump(mode="json") for q in added)
                conn.execute(
                    "INSERT INTO quiz_banks (topic_id, questions, updated_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (topic_id) DO UPDATE SET questions = excluded.questions, "
                    "updated_at = excluded.updated_at",
                    (topic_id, dumps(stored), to_text(utcnow())),
                )
            return added

        return await self._db.write(run)

    async def remove_question(self, topic_id: str, key: str) -> bool:
        """Remove one question by key."""

        def run(conn: sqlite3.Connection) -> bool:
            row = conn.execute(
                "SELECT questions FROM quiz_banks WHERE topic_id = ?", (topic_id,)
            ).fetchone()
            if row is None:
                return False
            stored = json.loads(row[0])
            kept = [q for q in stored if q.get("key") != key]
            if len(kept) == len(stored):
                return False
            conn.execute(
                "UPDATE quiz_banks SET questions = ?, updated_at = ? WHERE topic_id = ?",
                (dumps(kept), to_text(utcnow()), topic_id),
            )
            return True

        return await self._db.write(run)

    async def delete(self, topic_id: str) -> bool:
        """Delete a topic's bank."""
        sql = "DELETE FROM quiz_banks WHERE topic_id = ?"
        return await self._db.write(lambda c: c.execute(sql, (topic_id,)).rowcount > 0)
