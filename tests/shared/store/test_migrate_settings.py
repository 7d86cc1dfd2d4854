"""Migrations 6 and 8 move the old settings rows into their own tables; nothing is lost.

Migration 9 then drops the settings table: what no collection takes is named in the log.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from shared.store import open_store
from shared.store.sqlite.db import to_text
from shared.store.sqlite.migrations import MIGRATIONS

AT = "2026-03-02T09:00:00+00:00"


# Rows exactly as the services wrote them before the typed repositories existed.
def old_rows() -> dict[str, Any]:
    """The v4 settings rows; lock expiries are relative to now, not to import time."""
    return {**turn_rows(), **{
        "proposal:prop-1": {
            "kind": "r42-proposal", "id": "prop-1", "summary": "Nieuw onderwerp OKR",
            "delta": {"reason": "r", "topics": [{"id": "okr", "label": "OKR", "type": "concept"}]},
            "proposed_by": "U1", "created_at": AT, "prompt_version": "r42-v3", "status": "applied",
            "decided_by": "ADMIN", "decided_at": AT, "suggestion_id": "r42-prop-1",
            "decision_token": "tok",
        },
        "proposal:prop-foreign": {"kind": "something-else"},
        "feedback:cm-1700000000.000500:U1": {
            "positive": False, "user": "U1", "turn": "cm-1700000000.000500", "where": "dm",
            "at": AT,
        },
        "gateway:upload:src-1": {"channel": "D1", "ts": "17.5", "name": "a.md", "final": True,
                                 "outcome": {"state": "completed"}},
        "gateway:upload:src-2": {"channel": "D1", "ts": "18.5", "name": "b.md"},
        "extractor.progress.src-1": {"topics_added": 3, "topics_updated": 1, "relations_added": 2,
                                     "relations_dropped": 0, "changed_ids": ["okr", "scrum"]},
        "content.locks": {"okr": {"owner": "o1", "until": time.time() + 300},
                          "old": {"owner": "o2", "until": time.time() - 5}},
        "content.handled_requests": [
            {"event_id": "ev-1", "topic_id": "okr", "ok": True, "error": None,
             "generated": ["article"], "at": AT},
        ],
        "content.custom_topics": {
            "okr-basics": {"id": "okr-basics", "label": "OKR basics", "description": "d",
                           "type": "concept", "learning_relevance": "standard",
                           "requested_as": "okr", "requested_by": "U1", "created_at": AT,
                           "prompt_version": "ct-v1", "offline": True,
                           "suggestion_id": "custom-topic-okr-basics"},
        },
        "extractor.sample_handbook": {"published": 4, "at": AT},
        "feedback:broken": {"no": "fields"},
        "something.else": [1, 2, 3],
    }}  # fmt: skip


def turn_rows() -> dict[str, Any]:
    """The gateway's turn rows: one answered an hour ago, one past the retention."""
    recent = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    return {
        "turn:cm-1700000001.000100": {
            "user": "U1", "question": "Wat is OKR?", "topic_ids": ["okr", "scrum"],
            "answer": "OKR staat voor …", "model": "claude-x", "prompt_version": "r42-v3",
            "at": recent,
        },
        "turn:cm-1600000000.000100": {"user": "U2", "question": "Oud", "at": AT},
    }  # fmt: skip


def write_v4_store(path: Path) -> None:
    write_store_at(path, 4, old_rows())


def write_store_at(path: Path, version: int, rows: dict[str, Any]) -> None:
    with sqlite3.connect(path, isolation_level=None) as conn:
        conn.execute("BEGIN")
        conn.execute(
            "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, "
            "description TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        for migration in MIGRATIONS[:version]:
            migration.apply(conn)
            conn.execute(
                "INSERT INTO schema_version VALUES (?, ?, ?)",
                (migration.version, migration.description, AT),
            )
        conn.executemany(
            "INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)",
            [(k, json.dumps(v), AT) for k, v in rows.items()],
        )
        conn.execute("COMMIT")


async def test_old_settings_rows_read_back_through_the_new_repositories(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "v4.db"
    write_v4_store(path)
    with caplog.at_level(logging.WARNING, logger="shared.store"):
        store = await open_store(f"sqlite:///{path}")
    try:
        at = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
        proposal = await store.proposals.get("prop-1")
        assert proposal is not None
        assert (proposal.status, proposal.decided_by, proposal.suggestion_id) == (
            "applied", "ADMIN", "r42-prop-1",
        )  # fmt: skip
        assert proposal.created_at == at and proposal.delta["topics"][0]["id"] == "okr"
        vote = await store.feedback.get("cm-1700000000.000500", "U1")
        assert vote is not None and (vote.value, vote.surface, vote.created_at) == (
            "down",
            "dm",
            at,
        )
        assert [(r.topic_id, r.week, r.down) for r in await store.feedback.rates()] == [
            (None, "2026-W10", 1)
        ]
        done = await store.upload_messages.get("src-1")
        assert done is not None and done.final and done.outcome == {"state": "completed"}
        running = await store.upload_messages.get("src-2")
        assert running is not None and not running.final and running.ts == "18.5"
        progress = await store.merge_progress.get("src-1")
        assert (progress.topics_added, progress.changed_ids) == (3, ["okr", "scrum"])
        lease = await store.locks.get("content:okr")
        assert lease is not None and lease.owner == "o1"
        assert await store.locks.get("content:old") is None
        handled = await store.idempotency.get("content.requested", "ev-1")
        assert handled is not None and handled.value["generated"] == ["article"]
        custom = await store.custom_topics.get("okr-basics")
        assert custom is not None and custom.offline and custom.requested_by == "U1"
        turn = await store.turns.get("cm-1700000001.000100")
        assert turn is not None and (turn.user, turn.topic_ids, turn.model) == (
            "U1", ["okr", "scrum"], "claude-x",
        )  # fmt: skip
        assert await store.turns.get("cm-1600000000.000100") is None  # past the retention
        flag = await store.flags.get("extractor.sample_handbook")
        assert flag is not None and flag.value == {"published": 4, "at": AT}
        # Rows no collection takes are named in the log before the settings table goes.
        dropped = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
        assert dropped and all(
            key in dropped[-1] for key in ("proposal:prop-foreign", "feedback:broken",
                                           "something.else")
        )  # fmt: skip
    finally:
        await store.close()
    assert "settings" not in _tables(path)
    again = await open_store(f"sqlite:///{path}")  # migrating again changes nothing
    try:
        assert await again.proposals.get("prop-1") is not None
    finally:
        await again.close()


def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


async def test_fresh_store_has_the_state_tables(tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"
    store = await open_store(f"sqlite:///{path}")
    await store.close()
    tables = _tables(path)
    assert {"proposals", "feedback", "upload_messages", "merge_progress", "idempotency_keys",
            "custom_topics", "flags", "locks", "held_changes", "handbook_trees", "kb_version",
            "current_sources", "conversation_refs"} <= tables  # fmt: skip
    assert "settings" not in tables
    assert to_text(datetime(2026, 3, 2, tzinfo=UTC)) == "2026-03-02T00:00:00.000+00:00"


async def test_turn_rows_of_a_version_7_store_move_in_migration_8(tmp_path: Path) -> None:
    path = tmp_path / "v7.db"
    write_store_at(path, 7, {**turn_rows(), "something.else": [1]})
    store = await open_store(f"sqlite:///{path}")
    try:
        assert await store.schema_version() >= 8
        turn = await store.turns.get("cm-1700000001.000100")
        assert turn is not None and turn.question == "Wat is OKR?"
        assert turn.prompt_version == "r42-v3" and turn.answer == "OKR staat voor …"
        assert turn.expires_at is not None and turn.expires_at > datetime.now(UTC)
    finally:
        await store.close()
    assert "settings" not in _tables(path)


async def test_migration_15_marks_earlier_not_in_the_kb_turns_as_kb_misses(tmp_path: Path) -> None:
    path = tmp_path / "v12.db"
    store = await open_store(f"sqlite:///{path}")
    await store.close()
    with sqlite3.connect(path) as conn:  # the file as R42 before migration 15 left it
        conn.execute("ALTER TABLE turns DROP COLUMN kb_miss")
        conn.execute("DELETE FROM schema_version WHERE version = 15")
        later = "2999-01-01T00:00:00+00:00"
        for turn_id, answer in (("t1", "Dat staat NIET in de kennisgraaf."), ("t2", "Via HR.")):
            conn.execute(
                "INSERT INTO turns (turn_id, user, question, answer, created_at, expires_at) "
                "VALUES (?, 'U1', 'vraag', ?, ?, ?)",
                (turn_id, answer, to_text(datetime.now(UTC)), later),
            )
    store = await open_store(f"sqlite:///{path}")
    try:
        assert {t.turn_id: t.kb_miss for t in await store.turns.recent()} == {
            "t1": True, "t2": False,
        }  # fmt: skip
    finally:
        await store.close()
