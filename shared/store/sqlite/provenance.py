"""SQLite assertions (provenance), curation marks and the change log of before-images."""

from __future__ import annotations

import builtins
import sqlite3
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from shared.errors import BadInputError, NotFoundError
from shared.store._common import need, utcnow
from shared.store.models import Assertion, RelationKey, relation_from_subject, relation_subject
from shared.store.models_provenance import (
    CuratedField,
    CurationMark,
    Retraction,
    Unasserted,
    check_curated,
)
from shared.store.sqlite.db import SqliteDb, dumps, to_text

ASSERTION_COLUMNS = "kind, subject, source_id, chunk_index, version, asserted_at"
_RECORD = (
    f"INSERT INTO assertions ({ASSERTION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (kind, subject, source_id, chunk_index) DO UPDATE SET "
    "version = excluded.version, asserted_at = excluded.asserted_at"
)
# Each candidate is [subject, source, target, type]: the lookups use the relations' primary
# key (matching on the concatenated subject would scan every relation once per candidate).
_MISSING_RELATIONS = (
    "SELECT json_extract(j.value, '$[0]') FROM json_each(?) j WHERE NOT EXISTS (SELECT 1 "
    "FROM relations r WHERE r.source = json_extract(j.value, '$[1]') "
    "AND r.target = json_extract(j.value, '$[2]') AND r.type = json_extract(j.value, '$[3]'))"
)
_MISSING_TOPICS = (
    "SELECT j.value FROM json_each(?) j WHERE NOT EXISTS (SELECT 1 FROM topics t "
    "WHERE t.id = j.value)"
)
_RELATION_SUBJECT = "source || '|' || target || '|' || type"


def assertion_from_row(row: tuple[Any, ...]) -> Assertion:
    kind, subject, source_id, chunk_index, version, asserted_at = row
    data: dict[str, Any] = {"source_id": source_id, "chunk_index": chunk_index}
    data.update(version=version, asserted_at=asserted_at)
    if kind == "topic":
        data["topic_id"] = subject
    else:
        data["relation"] = relation_from_subject(subject)
    return Assertion.model_validate(data)


def record_assertions(
    conn: sqlite3.Connection, assertions: list[Assertion], *, skip_missing: bool = False
) -> int:
    """Record assertions inside the caller's transaction; every subject must exist (or, with
    skip_missing, the assertions of missing ones are left out). Returns how many were."""
    if not assertions:
        return 0
    topics = sorted({a.topic_id for a in assertions if a.topic_id is not None})
    relations = sorted({(a.subject[1], *a.relation.as_tuple()) for a in assertions
                        if a.relation is not None})  # fmt: skip
    missing = [r[0] for r in conn.execute(_MISSING_TOPICS, (dumps(topics),))]
    missing += [r[0] for r in conn.execute(_MISSING_RELATIONS, (dumps(relations),))]
    if missing and skip_missing:
        gone = set(missing)
        assertions = [a for a in assertions if a.subject[1] not in gone]
    elif missing:
        shown = ", ".join(missing[:10]) + (" …" if len(missing) > 10 else "")
        raise BadInputError(
            f"{len(missing)} asserted subject(s) do not exist: {shown}; nothing was written"
        )
    now = to_text(utcnow())
    conn.executemany(
        _RECORD,
        [(*a.subject, a.source_id, a.chunk_index, a.version, to_text(a.asserted_at) or now)
         for a in assertions],
    )  # fmt: skip
    return len(assertions)


def drop_for_topics(conn: sqlite3.Connection, ids_json: str) -> None:
    """Before topics are deleted: drop their assertions, their relations' and their marks."""
    conn.execute(
        "DELETE FROM assertions WHERE kind = 'relation' AND subject IN (SELECT "
        f"{_RELATION_SUBJECT} FROM relations WHERE source IN (SELECT value FROM json_each(:ids)) "
        "OR target IN (SELECT value FROM json_each(:ids)))",
        {"ids": ids_json},
    )
    conn.execute(
        "DELETE FROM assertions WHERE kind = 'topic' AND subject IN "
        "(SELECT value FROM json_each(?))",
        (ids_json,),
    )
    conn.execute(
        "DELETE FROM topic_curation WHERE topic_id IN (SELECT value FROM json_each(?))",
        (ids_json,),
    )


def drop_for_relations(conn: sqlite3.Connection, keys: list[RelationKey]) -> None:
    """Before relations are deleted: drop their assertions."""
    conn.executemany(
        "DELETE FROM assertions WHERE kind = 'relation' AND subject = ?",
        [(relation_subject(k),) for k in keys],
    )


def orphans(
    conn: sqlite3.Connection, topic_ids: list[str] | None, subjects: list[str] | None
) -> Unasserted:
    """Existing, uncurated topics and existing relations with no assertion (among the given)."""
    subject = "r.source || '|' || r.target || '|' || r.type"
    topic_where = "1" if topic_ids is None else "t.id IN (SELECT value FROM json_each(:topics))"
    rel_where = "1" if subjects is None else f"{subject} IN (SELECT value FROM json_each(:rels))"
    params = {"topics": dumps(topic_ids or []), "rels": dumps(subjects or [])}
    topics = conn.execute(
        f"SELECT t.id FROM topics t WHERE {topic_where} AND NOT EXISTS (SELECT 1 FROM assertions "
        "a WHERE a.kind = 'topic' AND a.subject = t.id) AND NOT EXISTS (SELECT 1 FROM "
        "topic_curation c WHERE c.topic_id = t.id) ORDER BY t.id",
        params,
    ).fetchall()
    relations = conn.execute(
        f"SELECT {subject} AS s FROM relations r WHERE {rel_where} AND NOT EXISTS "
        f"(SELECT 1 FROM assertions a WHERE a.kind = 'relation' AND a.subject = {subject}) "
        "ORDER BY s",
        params,
    ).fetchall()
    return Unasserted(
        topic_ids=[r[0] for r in topics], relations=[relation_from_subject(r[0]) for r in relations]
    )


class SqliteProvenance:
    """ProvenanceRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def record(self, assertions: Iterable[Assertion], *, skip_missing: bool = False) -> int:
        """Record assertions of existing subjects (a repeat refreshes version and time)."""
        batch = list(assertions)
        return await self._db.write(
            lambda c: record_assertions(c, batch, skip_missing=skip_missing)
        )

    async def of_source(self, source_id: str) -> builtins.list[Assertion]:
        """Everything a source asserts, topics first, by subject then chunk."""
        sql = (
            f"SELECT {ASSERTION_COLUMNS} FROM assertions WHERE source_id = ? "
            "ORDER BY kind DESC, subject, chunk_index"
        )
        rows = await self._db.read(lambda c: c.execute(sql, (source_id,)).fetchall())
        return [assertion_from_row(r) for r in rows]

    async def sources_of(self, topic_ids: Iterable[str]) -> dict[str, builtins.list[str]]:
        """topic id -> the sources asserting it."""
        return await self._sources("topic", sorted(set(topic_ids)))

    async def sources_of_relations(
        self, keys: Iterable[RelationKey]
    ) -> dict[tuple[str, str, str], builtins.list[str]]:
        """(source, target, type) -> the sources asserting it."""
        found = await self._sources("relation", sorted({relation_subject(k) for k in keys}))
        return {relation_from_subject(s).as_tuple(): v for s, v in found.items()}

    async def _sources(self, kind: str, subjects: list[str]) -> dict[str, builtins.list[str]]:
        sql = (
            "SELECT subject, source_id FROM assertions WHERE kind = ? AND subject IN "
            "(SELECT value FROM json_each(?)) GROUP BY subject, source_id "
            "ORDER BY subject, source_id"
        )
        rows = await self._db.read(lambda c: c.execute(sql, (kind, dumps(subjects))).fetchall())
        result: dict[str, builtins.list[str]] = {}
        for subject, source_id in rows:
            result.setdefault(subject, []).append(source_id)
        return result

    async def retract(
        self,
        source_id: str,
        *,
        except_version: str | None = None,
        chunks: Iterable[int] | None = None,
    ) -> Retraction:
        """Remove a source's assertions and name what no source asserts any more."""
        need(source_id, "retracting needs a source id")
        where, params = "source_id = ?", [source_id]
        if except_version is not None:
            where += " AND version <> ?"
            params.append(except_version)
        if chunks is not None:
            where += " AND chunk_index IN (SELECT value FROM json_each(?))"
            params.append(dumps(sorted(set(chunks))))

        def run(conn: sqlite3.Connection) -> Retraction:
            rows = conn.execute(
                f"DELETE FROM assertions WHERE {where} RETURNING kind, subject", params
            ).fetchall()
            topics = sorted({s for k, s in rows if k == "topic"})
            subjects = sorted({s for k, s in rows if k == "relation"})
            left = orphans(conn, topics, subjects)
            return Retraction(
                removed=len(rows),
                topic_ids=topics,
                relations=[relation_from_subject(s) for s in subjects],
                orphan_topic_ids=left.topic_ids,
                orphan_relations=left.relations,
            )

        return await self._db.write(run)

    async def unasserted(
        self,
        *,
        topic_ids: Iterable[str] | None = None,
        relations: Iterable[RelationKey] | None = None,
    ) -> Unasserted:
        """Existing, uncurated topics and existing relations no source asserts."""
        if topic_ids is None and relations is None:
            return await self._db.read(lambda c: orphans(c, None, None))
        topics = sorted(set(topic_ids or ()))
        subjects = sorted({relation_subject(k) for k in relations or ()})
        return await self._db.read(lambda c: orphans(c, topics, subjects))

    async def rename_source(self, old: str, new: str) -> int:
        """Move old's assertions to new; where new asserts the same already, new's row stays."""
        need(new, "renaming needs the new source id")

        def run(conn: sqlite3.Connection) -> int:
            moved: int = conn.execute(
                "UPDATE OR IGNORE assertions SET source_id = ? WHERE source_id = ?", (new, old)
            ).rowcount
            conn.execute("DELETE FROM assertions WHERE source_id = ?", (old,))
            return moved

        return await self._db.write(run) if old != new else 0


def _mark(row: tuple[Any, ...]) -> CurationMark:
    return CurationMark(topic_id=row[0], field=row[1], by=row[2], at=row[3])


class SqliteCuration:
    """CurationRepository on SQLite."""

    def __init__(self, db: SqliteDb) -> None:
        self._db = db

    async def mark(
        self,
        topic_id: str,
        fields: Iterable[CuratedField],
        *,
        by: str,
        now: datetime | None = None,
    ) -> builtins.list[CurationMark]:
        """Mark fields as set by an admin; returns all of the topic's marks."""
        need(by, "a curation mark needs the admin's id")
        chosen = check_curated(fields)
        at = to_text(now or utcnow())

        def run(conn: sqlite3.Connection) -> builtins.list[Any]:
            if not conn.execute("SELECT 1 FROM topics WHERE id = ?", (topic_id,)).fetchone():
                raise NotFoundError(f"topic {topic_id!r} does not exist")
            conn.executemany(
                "INSERT INTO topic_curation (topic_id, field, by, at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (topic_id, field) DO UPDATE SET by = excluded.by, at = excluded.at",
                [(topic_id, f, by, at) for f in chosen],
            )
            return conn.execute(
                "SELECT topic_id, field, by, at FROM topic_curation "
                "WHERE topic_id = ? ORDER BY field",
                (topic_id,),
            ).fetchall()

        return [_mark(r) for r in await self._db.write(run)]

    async def unmark(self, topic_id: str, fields: Iterable[str] | None = None) -> int:
        """Remove marks (all of the topic's when fields is None)."""
        params: tuple[str, ...]
        if fields is None:
            sql, params = "DELETE FROM topic_curation WHERE topic_id = ?", (topic_id,)
        else:
            sql = (
                "DELETE FROM topic_curation WHERE topic_id = ? AND field IN "
                "(SELECT value FROM json_each(?))"
            )
            params = (topic_id, dumps(sorted(set(fields))))
        return await self._db.write(lambda c: c.execute(sql, params).rowcount)

    async def of(self, topic_ids: Iterable[str]) -> dict[str, builtins.list[CurationMark]]:
        """The marks of each given topic that has any."""
        sql = (
            "SELECT topic_id, field, by, at FROM topic_curation WHERE topic_id IN "
            "(SELECT value FROM json_each(?)) ORDER BY topic_id, field"
        )
        ids = dumps(sorted(set(topic_ids)))
        result: dict[str, builtins.list[CurationMark]] = {}
        for row in await self._db.read(lambda c: c.execute(sql, (ids,)).fetchall()):
            result.setdefault(row[0], []).append(_mark(row))
        return result

    async def curated_ids(self, topic_ids: Iterable[str] | None = None) -> set[str]:
        """Topics with at least one mark."""
        params: tuple[str, ...] = ()
        if topic_ids is None:
            sql = "SELECT DISTINCT topic_id FROM topic_curation"
        else:
            sql = (
                "SELECT DISTINCT topic_id FROM topic_curation WHERE topic_id IN "
                "(SELECT value FROM json_each(?))"
            )
            params = (dumps(sorted(set(topic_ids))),)
        return {r[0] for r in await self._db.read(lambda c: c.execute(sql, params).fetchall())}
