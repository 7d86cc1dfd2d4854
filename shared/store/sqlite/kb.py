"""SQLite topics and relations, and the atomic graph write used by merges, deltas and imports."""

from __future__ import annotations

import builtins
import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from pydantic import TypeAdapter

from shared.errors import BadInputError, NotFoundError
from shared.store._common import utcnow
from shared.store.models import (
    LEARNING_RELEVANCES,
    ChunkMark,
    KbChangeResult,
    KbChanges,
    Relation,
    RelationKey,
    Topic,
    TopicCounts,
)
from shared.store.paging import PAGE, checked_after, checked_key, checked_page
from shared.store.sqlite.db import SqliteDb, dumps, to_text
from shared.store.sqlite.provenance import drop_for_relations, drop_for_topics, record_assertions

_TOPIC_COLUMNS = (
    "id, label, type, description, learning_relevance, relevance_locked, metadata, "
    "created_at, updated_at"
)
# A locked relevance (an admin decision) survives upserts that do not themselves lock it.
_UPSERT_TOPIC = f"""
INSERT INTO topics ({_TOPIC_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
    label = excluded.label,
    type = excluded.type,
    description = excluded.description,
    learning_relevance = CASE WHEN topics.relevance_locked AND NOT excluded.relevance_locked
        THEN topics.learning_relevance ELSE excluded.learning_relevance END,
    relevance_locked = max(topics.relevance_locked, excluded.relevance_locked),
    metadata = excluded.metadata,
    created_at = coalesce(topics.created_at, excluded.created_at),
    updated_at = excluded.updated_at
"""
_UPSERT_RELATION = """
INSERT INTO relations (source, target, type, description) VALUES (?, ?, ?, ?)
ON CONFLICT (source, target, type) DO UPDATE SET description = excluded.description
"""
_MISSING_IDS = "SELECT value FROM json_each(?) WHERE value NOT IN (SELECT id FROM topics)"
# Bulk reads: SQLite renders the rows as one JSON array and pydantic-core parses and
# validates it in one call, about twice as fast as building Python dicts row by row.
_TOPICS_JSON = """
SELECT json_group_array(json_object(
    'id', id, 'label', label, 'type', type, 'description', description,
    'learning_relevance', learning_relevance, 'relevance_locked', relevance_locked,
    'metadata', json(metadata), 'created_at', created_at, 'updated_at', updated_at))
FROM (SELECT * FROM topics WHERE {where} ORDER BY id{limit})
"""
_TOPIC_LIST = TypeAdapter(list[Topic])


def _topic_row(topic: Topic, now: str) -> tuple[Any, ...]:
    return (
        topic.id,
        topic.label,
        topic.type,
        topic.description,
        topic.learning_relevance,
        int(topic.relevance_locked),
        dumps(topic.metadata.model_dump(exclude_none=True)),
        to_text(topic.created_at) or now,
        now,
    )


def _topic(row: sqlite3.Row | tuple[Any, ...]) -> Topic:
    return Topic.model_validate(
        {
            "id": row[0],
            "label": row[1],
            "type": row[2],
            "description": row[3],
            "learning_relevance": row[4],
            "relevance_locked": bool(row[5]),
            "metadata": json.loads(row[6] or "{}"),
            "created_at": row[7],
            "updated_at": row[8],
        }
    )


def _relation(row: tuple[Any, ...]) -> Relation:
    return Relation(source=row[0], target=row[1], type=row[2], description=row[3])


def upsert_topics(conn: sqlite3.Connection, topics: list[Topic]) -> None:
    """Upsert topics inside the caller's transaction."""
    now = to_text(utcnow()) or ""
    conn.executemany(_UPSERT_TOPIC, [_topic_row(t, now) for t in topics])


def upsert_relations(conn: sqlite3.Connection, relations: list[Relation]) -> None:
    """Upsert relations inside the caller's transaction, then check every endpoint exists."""
    conn.executemany(
        _UPSERT_RELATION, [(r.source, r.target, r.type, r.description) for r in relations]
    )
    referenced = sorted({r.source for r in relations} | {r.target for r in relations})
    if not referenced:
        return
    missing = [row[0] for row in conn.execute(_MISSING_IDS, (dumps(referenced),))]
    if missing:
        shown = ", ".join(missing[:10]) + (" …" if len(missing) > 10 else "")
        raise BadInputError(
            f"{len(missing)} relation endpoint(s) are not topics: {shown}; nothing was written"
        )


def select_topics(conn: sqlite3.Connection, topic_ids: list[str]) -> list[Topic]:
    """The topics among the ids, in id order, inside the caller's transaction."""
    sql = _TOPICS_JSON.format(where="id IN (SELECT value FROM json_each(?))", limit="")
    return _TOPIC_LIST.validate_json(conn.execute(sql, (dumps(topic_ids),)).fetchone()[0])


def select_relations(conn: sqlite3.Connection, keys: list[tuple[str, str, str]]) -> list[Relation]:
    """The relations among the (source, target, type) keys, in key order."""
    sql = (
        "SELECT source, target, type, description FROM relations "
        "WHERE source = ? AND target = ? AND type = ?"
    )
    rows = [conn.execute(sql, key).fetchone() for key in sorted(set(keys))]
    return [_relation(r) for r in rows if r is not None]


def relations_touching(conn: sqlite3.Connection, topic_ids: list[str]) -> list[Relation]:
    """The relations with either endpoint among the ids, in key order."""
    sql = (
        "SELECT source, target, type, description FROM relations "
        "WHERE source IN (SELECT value FROM json_each(:ids)) "
        "OR target IN (SELECT value FROM json_each(:ids)) ORDER BY source, target, type"
    )
    return [_relation(r) for r in conn.execute(sql, {"ids": dumps(topic_ids)})]


def delete_relations(conn: sqlite3.Connection, keys: list[RelationKey]) -> int:
    """Delete relations (and their assertions) by key inside the caller's transaction."""
    drop_for_relations(conn, keys)
    before = conn.total_changes
    conn.executemany(
        "DELETE FROM relations WHERE source = ? AND target = ? AND type = ?",
        [k.as_tuple() for k in keys],
    )
    return conn.total_changes - before


def delete_topics(conn: sqlite3.Connection, topic_ids: list[str]) -> list[str]:
    """Delete topics and their relations; returns the ids that existed."""
    if not topic_ids:
        return []
    ids = dumps(sorted(set(topic_ids)))
    existing = [
        row[0]
        for row in conn.execute(
            "SELECT id FROM topics WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id", (ids,)
        )
    ]
    drop_for_topics(conn, ids)
    conn.execute(
        "DELETE FROM relations WHERE source IN (SELECT value FROM json_each(?)) "
        "OR target IN (SELECT value FROM json_each(?))",
        (ids, ids),
    )
    conn.execute("DELETE FROM topics WHERE id IN (SELECT value FROM json_each(?))", (ids,))
    return existing


def apply_changes(
    conn: sqlite3.Connection, changes: KbChanges, chunk: ChunkMark | None
) -> KbChangeResult:
    """The body of Store.apply_kb_changes, run in one BEGIN IMMEDIATE transaction."""
    if chunk is not None:
        if not conn.execute("SELECT 1 FROM sources WHERE id = ?", (chunk.source_id,)).fetchone():
            raise NotFoundError(f"source {chunk.source_id!r} does not exist")
        inserted = conn.execute(
            "INSERT OR IGNORE INTO source_chunks (source_id, chunk_index, merged_at) "
            "VALUES (?, ?, ?)",
            (chunk.source_id, chunk.chunk_index, to_text(utcnow())),
        ).rowcount
        if not inserted:
            return KbChangeResult(applied=False)
    relations_deleted = delete_relations(conn, changes.relations_delete)
    deleted = delete_topics(conn, changes.topics_delete)
    upsert_topics(conn, changes.topics_upsert)
    upsert_relations(conn, changes.relations_upsert)
    record_assertions(conn, changes.assertions)
    if chunk is not None:
        conn.execute(
            "UPDATE sources SET chunks_done = "
            "(SELECT count(*) FROM source_chunks WHERE source_id = ?), updated_at = ? WHERE id = ?",
            (chunk.source_id, to_text(utcnow()), chunk.source_id),
        )
    return KbChangeResult(
        applied=True,
        topic_ids_upserted=[t.id for t in changes.topics_upsert],
        topic_ids_deleted=deleted,
        relations_upserted=len(changes.relations_upsert),
        relations_deleted=relations_deleted,
    )


class SqliteTopics:
    """TopicRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def get(self, topic_id: str) -> Topic | None:
        """One topic or None."""
        sql = f"SELECT {_TOPIC_COLUMNS} FROM topics WHERE id = ?"
        row = await self._db.read(lambda c: c.execute(sql, (topic_id,)).fetchone())
        return _topic(row) if row else None

    async def get_many(self, topic_ids: Iterable[str]) -> list[Topic]:
        """The topics that exist among the ids, in id order."""
        ids = dumps(sorted(set(topic_ids)))
        return await self._select("id IN (SELECT value FROM json_each(?))", [ids])

    async def list(self, *, type: str | None = None, relevance: str | None = None) -> list[Topic]:
        """All topics (optionally filtered), in id order."""
        clauses, params = ["1"], []
        if type is not None:
            clauses.append("type = ?")
            params.append(type)
        if relevance is not None:
            clauses.append("learning_relevance = ?")
            params.append(relevance)
        return await self._select(" AND ".join(clauses), params)

    async def page(self, *, after_id: str | None = None, limit: int = PAGE) -> builtins.list[Topic]:
        """Up to `limit` topics with ids after `after_id` (from the first), in id order."""
        limit = checked_page(limit)
        if after_id is None:
            return await self._select("1", [], limit=limit)
        return await self._select("id > ?", [checked_after(after_id)], limit=limit)

    async def _select(
        self, where: str, params: builtins.list[Any], *, limit: int | None = None
    ) -> builtins.list[Topic]:
        sql = _TOPICS_JSON.format(where=where, limit="" if limit is None else f" LIMIT {limit}")
        raw = await self._db.read(lambda c: c.execute(sql, params).fetchone()[0])
        return _TOPIC_LIST.validate_json(raw)

    async def ids(self) -> set[str]:
        """Every topic id."""
        rows = await self._db.read(lambda c: c.execute("SELECT id FROM topics").fetchall())
        return {r[0] for r in rows}

    async def recent_ids(self, limit: int = 200) -> builtins.list[str]:
        """The ids of the most recently updated topics, newest first (an index scan)."""
        sql = "SELECT id FROM topics ORDER BY updated_at DESC, id LIMIT ?"
        rows = await self._db.read(lambda c: c.execute(sql, (max(limit, 0),)).fetchall())
        return [r[0] for r in rows]

    async def upsert_many(self, topics: Iterable[Topic]) -> int:
        """Insert or update topics in one transaction."""
        batch = list(topics)
        await self._db.write(lambda c: upsert_topics(c, batch))
        return len(batch)

    async def set_relevance(self, topic_id: str, relevance: str, *, lock: bool = True) -> Topic:
        """Set a topic's learning relevance (locking it by default)."""
        if relevance not in LEARNING_RELEVANCES:
            raise BadInputError(
                f"unknown learning relevance {relevance!r}; expected one of {LEARNING_RELEVANCES}"
            )

        def run(conn: sqlite3.Connection) -> Any:
            conn.execute(
                "UPDATE topics SET learning_relevance = ?, relevance_locked = ?, updated_at = ? "
                "WHERE id = ?",
                (relevance, int(lock), to_text(utcnow()), topic_id),
            )
            return conn.execute(
                f"SELECT {_TOPIC_COLUMNS} FROM topics WHERE id = ?", (topic_id,)
            ).fetchone()

        row = await self._db.write(run)
        if row is None:
            raise NotFoundError(f"topic {topic_id!r} does not exist")
        return _topic(row)

    async def delete_many(self, topic_ids: Iterable[str]) -> int:
        """Delete topics and every relation touching them."""
        ids = list(topic_ids)
        return len(await self._db.write(lambda c: delete_topics(c, ids)))

    async def counts(self) -> TopicCounts:
        """Totals by type and by learning relevance."""

        def run(conn: sqlite3.Connection) -> TopicCounts:
            by_type = dict(conn.execute("SELECT type, count(*) FROM topics GROUP BY type"))
            by_rel = dict(
                conn.execute(
                    "SELECT learning_relevance, count(*) FROM topics GROUP BY learning_relevance"
                )
            )
            return TopicCounts(total=sum(by_type.values()), by_type=by_type, by_relevance=by_rel)

        return await self._db.read(run)


class SqliteRelations:
    """RelationRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def list(self, *, topic_id: str | None = None, type: str | None = None) -> list[Relation]:
        """All relations (or those touching a topic / of a type), ordered by key."""
        clauses, params = ["1"], []
        if topic_id is not None:
            # Two index lookups (primary key by source, relations_target) instead of a scan.
            clauses.append("(source = ? OR target = ?)")
            params += [topic_id, topic_id]
        if type is not None:
            clauses.append("type = ?")
            params.append(type)
        sql = (
            "SELECT source, target, type, description FROM relations "
            f"WHERE {' AND '.join(clauses)} ORDER BY source, target, type"
        )
        rows = await self._db.read(lambda c: c.execute(sql, params).fetchall())
        return [_relation(r) for r in rows]

    async def touching(self, topic_ids: Iterable[str]) -> builtins.list[Relation]:
        """The relations with either endpoint among the ids, ordered by key."""
        ids = sorted(set(topic_ids))
        return await self._db.read(lambda c: relations_touching(c, ids))

    async def page(
        self, *, after: RelationKey | None = None, limit: int = PAGE
    ) -> builtins.list[Relation]:
        """Up to `limit` relations with keys after `after` (from the first), ordered by key."""
        limit = checked_page(limit)
        columns = "SELECT source, target, type, description FROM relations"
        order = f"ORDER BY source, target, type LIMIT {limit}"
        if after is None:
            sql, params = f"{columns} {order}", []
        else:
            # A row-value comparison: one range scan of the primary key.
            sql = f"{columns} WHERE (source, target, type) > (?, ?, ?) {order}"
            params = list(checked_key(after))
        rows = await self._db.read(lambda c: c.execute(sql, params).fetchall())
        return [_relation(r) for r in rows]

    async def upsert_many(self, relations: Iterable[Relation]) -> int:
        """Insert or update relations in one transaction."""
        batch = list(relations)
        await self._db.write(lambda c: upsert_relations(c, batch))
        return len(batch)

    async def delete_many(self, keys: Iterable[RelationKey]) -> int:
        """Delete relations by key."""
        batch = list(keys)
        return await self._db.write(lambda c: delete_relations(c, batch))

    async def count_by_type(self) -> dict[str, int]:
        """Relation totals per type."""
        sql = "SELECT type, count(*) FROM relations GROUP BY type"
        return await self._db.read(lambda c: dict(c.execute(sql)))
