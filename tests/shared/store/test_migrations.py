"""Migrations bring a legacy (v0) SQLite file up to date, once."""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path

from shared.store import open_store
from shared.store.sqlite import LATEST_VERSION
from shared.store.sqlite.migrations import MIGRATIONS

# Versions are numbered per feature branch, so the tuple may have gaps; every one is applied.
VERSIONS = [m.version for m in MIGRATIONS]

LEGACY_V0 = """
CREATE TABLE topics (id TEXT PRIMARY KEY, label TEXT NOT NULL, type TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '', learning_relevance TEXT NOT NULL DEFAULT 'standard',
    metadata TEXT NOT NULL DEFAULT '{}', created_at TEXT, updated_at TEXT);
CREATE TABLE relations (source TEXT NOT NULL, target TEXT NOT NULL, type TEXT NOT NULL,
    description TEXT, PRIMARY KEY (source, target, type));
CREATE TABLE quiz_banks (topic_id TEXT PRIMARY KEY, questions TEXT NOT NULL DEFAULT '[]',
    updated_at TEXT);
"""


def make_legacy(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.executescript(LEGACY_V0)
        conn.executemany(
            "INSERT INTO topics (id, label, type, learning_relevance, metadata) "
            "VALUES (?, ?, ?, ?, ?)",
            [
                ("product-owner", "Product owner", "role", "core", '{"source": "seed"}'),
                ("scrum-master", "Scrum master", "role", "standard", "{}"),
                ("sprint-review", "Sprint review", "process", "standard", "{}"),
                ("backlog-refinement", "Backlog refinement", "process", "peripheral", "{}"),
            ],
        )
        conn.executemany(
            "INSERT INTO relations VALUES (?, ?, ?, ?)",
            [
                # role executes process -> process executed_by role
                ("product-owner", "sprint-review", "executes", "leads it"),
                ("scrum-master", "backlog-refinement", "executes", None),
                # ... whose swapped form already exists: keep the existing one only
                ("scrum-master", "sprint-review", "executes", "legacy text"),
                ("sprint-review", "scrum-master", "executed_by", "kept"),
                ("sprint-review", "backlog-refinement", "related_to", None),
            ],
        )
        questions = [
            {"text": "Who leads the sprint review?", "options": ["PO", "SM"], "correct_index": 0},
            {"text": "Hard one", "options": ["a", "b"], "correct_index": 1, "difficulty": "hard",
             "key": "hard one"},
        ]  # fmt: skip
        conn.execute(
            "INSERT INTO quiz_banks VALUES (?, ?, ?)",
            ("sprint-review", json.dumps(questions), None),
        )


async def test_legacy_database_is_normalised(tmp_path: Path) -> None:
    path = tmp_path / "legacy.db"
    make_legacy(path)
    store = await open_store(f"sqlite:///{path}")
    try:
        assert await store.schema_version() == LATEST_VERSION
        topics = {t.id: t for t in await store.topics.list()}
        assert len(topics) == 4
        assert all(t.relevance_locked is False for t in topics.values())
        assert topics["product-owner"].learning_relevance == "core"
        assert topics["product-owner"].metadata.source == "seed"
        relations = {r.key.as_tuple(): r.description for r in await store.relations.list()}
        assert relations == {
            ("sprint-review", "product-owner", "executed_by"): "leads it",
            ("backlog-refinement", "scrum-master", "executed_by"): None,
            ("sprint-review", "scrum-master", "executed_by"): "kept",
            ("sprint-review", "backlog-refinement", "related_to"): None,
        }
        bank = await store.quiz_banks.get("sprint-review")
        assert bank is not None
        assert [(q.key, q.difficulty) for q in bank.questions] == [
            ("who leads the sprint review", "medium"),
            ("hard one", "hard"),
        ]
        # New collections exist and work on the migrated file.
        assert await store.flags.set_if_absent("migrated")
    finally:
        await store.close()
    with sqlite3.connect(path) as conn:
        raw = json.loads(conn.execute("SELECT questions FROM quiz_banks").fetchone()[0])
        assert raw[0]["difficulty"] == "medium"  # persisted, not only defaulted on read
        history = conn.execute("SELECT version FROM schema_version ORDER BY version").fetchall()
    assert [v for (v,) in history] == VERSIONS


async def test_migrating_again_is_a_no_op(tmp_path: Path) -> None:
    path = tmp_path / "legacy.db"
    make_legacy(path)
    first = await open_store(f"sqlite:///{path}")
    await first.close()

    def snapshot() -> list[object]:
        with sqlite3.connect(path) as conn:
            return [
                conn.execute("SELECT * FROM schema_version ORDER BY version").fetchall(),
                conn.execute("SELECT * FROM topics ORDER BY id").fetchall(),
                conn.execute("SELECT * FROM relations ORDER BY source, target, type").fetchall(),
                conn.execute("SELECT * FROM quiz_banks").fetchall(),
            ]

    before = snapshot()
    again = await open_store(f"sqlite:///{path}")
    assert await again.schema_version() == LATEST_VERSION
    await again.close()
    assert snapshot() == before


def test_versions_strictly_increase_from_one() -> None:
    from shared.store.mongo.migrations import MIGRATIONS as MONGO_MIGRATIONS

    for versions in (VERSIONS, [m.version for m in MONGO_MIGRATIONS]):
        assert versions[0] == 1
        assert all(a < b for a, b in itertools.pairwise(versions))
    assert VERSIONS[-1] == LATEST_VERSION


async def test_fresh_database_gets_every_version(tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"
    store = await open_store(f"sqlite:///{path}")
    await store.close()
    with sqlite3.connect(path) as conn:
        versions = [
            v for (v,) in conn.execute("SELECT version FROM schema_version ORDER BY version")
        ]
        columns = {row[1] for row in conn.execute("PRAGMA table_info(topics)")}
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert versions == VERSIONS
    assert "relevance_locked" in columns
    assert mode == "wal"


async def test_mongodb_legacy_database_is_normalised(mongodb_url: str) -> None:
    import uuid

    from pymongo import AsyncMongoClient

    from shared.store.mongo import LATEST_VERSION as MONGO_LATEST
    from shared.store.mongo import MongoStore

    name = f"r42_legacy_{uuid.uuid4().hex[:10]}"
    client: AsyncMongoClient[dict[str, object]] = AsyncMongoClient(mongodb_url, tz_aware=True)
    try:
        db = client[name]
        await db["topics"].insert_many(
            [{"_id": "product-owner", "label": "PO", "type": "role"},
             {"_id": "sprint-review", "label": "Review", "type": "process"},
             {"_id": "scrum-master", "label": "SM", "type": "role"}]
        )  # fmt: skip
        await db["relations"].insert_many(
            [{"_id": "product-owner|sprint-review|executes", "source": "product-owner",
              "target": "sprint-review", "type": "executes", "description": "leads"},
             {"_id": "scrum-master|sprint-review|executes", "source": "scrum-master",
              "target": "sprint-review", "type": "executes", "description": "legacy"},
             {"_id": "sprint-review|scrum-master|executed_by", "source": "sprint-review",
              "target": "scrum-master", "type": "executed_by", "description": "kept"}]
        )  # fmt: skip
        await db["quiz_banks"].insert_one(
            {"_id": "sprint-review",
             "questions": [{"text": "Who leads it?", "options": ["PO", "SM"], "correct_index": 0}]}
        )  # fmt: skip
        for _ in range(2):  # the second open is a no-op
            store = await MongoStore.open(mongodb_url, database=name)
            try:
                assert await store.schema_version() == MONGO_LATEST
                assert all(not t.relevance_locked for t in await store.topics.list())
                relations = {r.key.as_tuple(): r.description for r in await store.relations.list()}
                assert relations == {
                    ("sprint-review", "product-owner", "executed_by"): "leads",
                    ("sprint-review", "scrum-master", "executed_by"): "kept",
                }
                bank = await store.quiz_banks.get("sprint-review")
                assert bank is not None
                assert [(q.key, q.difficulty) for q in bank.questions] == [
                    ("who leads it", "medium")
                ]
            finally:
                await store.close()
        raw = await db["quiz_banks"].find_one({"_id": "sprint-review"})
        assert raw is not None and raw["questions"][0]["difficulty"] == "medium"
    finally:
        await client.drop_database(name)
        await client.close()


async def test_a_migration_that_lands_after_a_higher_number_still_applies(tmp_path: Path) -> None:
    # A store made by a release that had 15 but not 13 yet (numbers given to parallel work).
    path = tmp_path / "r42.db"
    store = await open_store(f"sqlite:///{path}")
    await store.close()
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE topic_tombstones")
        conn.execute("DELETE FROM schema_version WHERE version = 13")
    again = await open_store(f"sqlite:///{path}")
    try:
        assert await again.schema_version() == LATEST_VERSION
        assert await again.tombstones.list() == []  # the table is back
    finally:
        await again.close()
    with sqlite3.connect(path) as conn:
        history = [v for (v,) in conn.execute("SELECT version FROM schema_version ORDER BY 1")]
    assert history == VERSIONS


# Turns as R42 stored them before migration 15 gave them kb_miss (the gap list's flag).
OLD_TURNS = [
    ("t-miss", "Dat staat NIET in de kennisgraaf.", ["verlof"], "claude-haiku-4-5"),
    ("t-miss-en", "Sorry, that is not in the knowledge graph.", [], None),
    ("t-hit", "Verlof vraag je aan via HR.", ["verlof", "hr"], "claude-haiku-4-5"),
]


def _old_turns_table(conn: sqlite3.Connection) -> None:
    """The turns table exactly as migration 8 made it (no kb_miss), holding three turns."""
    from shared.store.sqlite.turns import TURNS_SCHEMA

    conn.execute("DROP TABLE turns")
    conn.executescript(TURNS_SCHEMA)
    conn.execute("DELETE FROM schema_version WHERE version = 15")
    for i, (turn_id, answer, topic_ids, model) in enumerate(OLD_TURNS):
        conn.execute(
            "INSERT INTO turns (turn_id, user, question, topic_ids, answer, model, "
            "prompt_version, created_at, expires_at) VALUES (?, 'U1', 'vraag', ?, ?, ?, 'r42-v3', "
            "?, '2999-01-01T00:00:00+00:00')",
            (turn_id, json.dumps(topic_ids), answer, model, f"2026-11-0{i + 1}T10:00:00+00:00"),
        )


async def test_migration_15_keeps_old_turns_and_reads_them_back_typed(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    path = tmp_path / "r42.db"
    store = await open_store(f"sqlite:///{path}")
    await store.close()
    with sqlite3.connect(path) as conn:
        _old_turns_table(conn)
        assert "kb_miss" not in {row[1] for row in conn.execute("PRAGMA table_info(turns)")}
    for _ in range(2):  # the second open finds version 15 recorded and changes nothing
        store = await open_store(f"sqlite:///{path}")
        try:
            assert await store.schema_version() == LATEST_VERSION
            turns = {t.turn_id: t for t in await store.turns.recent()}
        finally:
            await store.close()
        assert set(turns) == {t[0] for t in OLD_TURNS}
        for turn_id, answer, topic_ids, model in OLD_TURNS:
            turn = turns[turn_id]
            assert (turn.answer, turn.topic_ids, turn.model) == (answer, topic_ids, model)
            assert turn.prompt_version == "r42-v3" and turn.user == "U1"
            assert isinstance(turn.kb_miss, bool)
            assert turn.kb_miss is (turn_id != "t-hit")
            assert turn.created_at is not None and turn.created_at.tzinfo is not None
        assert turns["t-miss"].created_at == datetime(2026, 11, 1, 10, tzinfo=UTC)
    with sqlite3.connect(path) as conn:
        stored = dict(conn.execute("SELECT turn_id, kb_miss FROM turns").fetchall())
        history = [v for (v,) in conn.execute("SELECT version FROM schema_version ORDER BY 1")]
    assert stored == {"t-miss": 1, "t-miss-en": 1, "t-hit": 0}  # persisted, not read-time only
    assert history == VERSIONS


async def test_mongodb_migration_15_types_old_turns_for_the_gap_list(mongodb_url: str) -> None:
    import uuid
    from datetime import UTC, datetime

    from pymongo import AsyncMongoClient

    from shared.store.mongo import LATEST_VERSION as MONGO_LATEST
    from shared.store.mongo import MongoStore

    name = f"r42_m15_{uuid.uuid4().hex[:10]}"
    client: AsyncMongoClient[dict[str, object]] = AsyncMongoClient(mongodb_url, tz_aware=True)
    try:
        first = await MongoStore.open(mongodb_url, database=name)
        await first.close()
        db = client[name]
        # The database as a release before migration 15 left it: turns without kb_miss.
        await db["schema_version"].delete_one({"_id": 15})
        await db["turns"].insert_many(
            [{"_id": turn_id, "user": "U1", "question": "vraag", "topic_ids": topic_ids,
              "answer": answer, "model": model, "prompt_version": "r42-v3",
              "created_at": datetime(2026, 11, i + 1, 10, tzinfo=UTC),
              "expires_at": datetime(2999, 1, 1, tzinfo=UTC)}
             for i, (turn_id, answer, topic_ids, model) in enumerate(OLD_TURNS)]
        )  # fmt: skip
        for _ in range(2):  # the second open is a no-op
            store = await MongoStore.open(mongodb_url, database=name)
            try:
                assert await store.schema_version() == MONGO_LATEST
                turns = {t.turn_id: t for t in await store.turns.recent()}
            finally:
                await store.close()
            assert set(turns) == {t[0] for t in OLD_TURNS}
            for turn_id, answer, topic_ids, model in OLD_TURNS:
                turn = turns[turn_id]
                assert (turn.answer, turn.topic_ids, turn.model) == (answer, topic_ids, model)
                assert turn.kb_miss is (turn_id != "t-hit")
            assert turns["t-miss"].created_at == datetime(2026, 11, 1, 10, tzinfo=UTC)
        raw = {d["_id"]: d["kb_miss"] async for d in db["turns"].find({}, {"kb_miss": 1})}
        assert raw == {"t-miss": True, "t-miss-en": True, "t-hit": False}  # stored as booleans
        assert await db["schema_version"].count_documents({"_id": 15}) == 1
    finally:
        await client.drop_database(name)
        await client.close()
