"""Migration 9 moves the last settings rows into typed tables and drops settings."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from shared.store import RelationKey, open_store
from shared.store.sqlite import LATEST_VERSION
from tests.shared.store.test_migrate_settings import AT, write_store_at

OKR = {"id": "okr", "label": "OKR", "type": "concept", "description": "Doelen."}


# Rows exactly as the extractor and the Teams surface wrote them before version 9.
def v8_rows() -> dict[str, Any]:
    """Held and undo images, provenance, the tree cache, the kb hash and Teams references."""
    return {
        "held:index": ["src-1:3"],
        "held:src-1:3": {
            "asserter": "src-1", "reason": "chunk 3 would rewrite 9 topics",
            "updated_ids": ["okr"], "at": AT, "changes": {"topics_upsert": [OKR]},
            "assertions": {"topics": ["okr"], "relations": ["okr|scrum|related_to"]},
        },
        "undo:log": ["undo-abc"],
        "undo:undo-abc": {
            "reason": "graph analysis", "at": AT,
            "topics_before": {"okr": OKR, "new-one": None},
            "relations_before": [], "relations_written": ["okr|scrum|related_to"],
        },
        "provenance:source:handbook:a.md": {
            "topics": ["okr", "gone"], "relations": ["okr|scrum|related_to"],
        },
        "provenance:topic:okr": ["handbook:a.md"],
        "provenance:relation:okr|scrum|related_to": ["handbook:a.md"],
        "provenance:name:a.md": "src-2",
        "handbook:tree": {"where": "acme/handbook@main", "path": "docs", "etag": 'W/"7"',
                          "files": [["docs/a.md", "sha-a", 12]]},
        "kb:version_hash": "abcd1234",
        "teams:ref:a:1": {"conversation": {"id": "a:1"}, "serviceUrl": "https://smba"},
        "teams:ref:19:c@thread": {"conversation": {"id": "19:c@thread"}},
        "teams:user:aad-1": {"conversation": "a:1"},
        "teams:service": {"serviceUrl": "https://smba", "tenantId": "t1", "bot": None},
        "held:src-9:1": {"reason": "no asserter"},
        "mystery": 42,
    }  # fmt: skip


def _graph(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.executemany(
            "INSERT INTO topics (id, label, type, description) VALUES (?, ?, ?, ?)",
            [("okr", "OKR", "concept", "Doelen."), ("scrum", "Scrum", "process", "")],
        )
        conn.execute(
            "INSERT INTO relations (source, target, type) VALUES ('okr', 'scrum', 'related_to')"
        )


async def test_version_8_rows_read_back_through_the_typed_repositories(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "v8.db"
    write_store_at(path, 8, v8_rows())
    _graph(path)
    with caplog.at_level(logging.WARNING, logger="shared.store"):
        store = await open_store(f"sqlite:///{path}")
    try:
        assert await store.schema_version() == LATEST_VERSION
        held = await store.held_changes.get("src-1:3")
        assert held is not None and held.asserter == "src-1" and held.updated_ids == ["okr"]
        assert [t.id for t in held.changes.topics_upsert] == ["okr"] and held.topics == ["okr"]
        assert held.relations == [RelationKey(source="okr", target="scrum", type="related_to")]
        assert [h.key for h in await store.held_changes.list()] == ["src-1:3"]
        batch = await store.change_log.get("undo-abc")
        assert batch is not None and batch.reason == "graph analysis"
        assert [t.id for t in batch.topics_before] == ["okr"]
        assert batch.topics_absent == ["new-one"]
        assert [k.as_tuple() for k in batch.relations_absent] == [("okr", "scrum", "related_to")]
        # Provenance of what the graph still has moves; "gone" has nothing left to assert.
        assert await store.provenance.sources_of(["okr", "gone"]) == {"okr": ["handbook:a.md"]}
        relation = RelationKey(source="okr", target="scrum", type="related_to")
        assert await store.provenance.sources_of_relations([relation]) == {
            ("okr", "scrum", "related_to"): ["handbook:a.md"]
        }
        assert await store.current_sources.get("a.md") == "src-2"
        tree = await store.handbook_trees.get("acme/handbook@main", "docs")
        assert tree is not None and tree.etag == 'W/"7"'
        assert tree.files == [("docs/a.md", "sha-a", 12)]
        assert await store.kb_version.get() == "abcd1234"
        personal = await store.conversation_refs.personal("teams", "aad-1")
        assert personal is not None and personal.conversation_id == "a:1"
        assert personal.reference["serviceUrl"] == "https://smba"
        channel = await store.conversation_refs.get("teams", "19:c@thread")
        assert channel is not None and channel.user_id is None
        service = await store.flags.get("teams:service")
        assert service is not None and service.value["tenantId"] == "t1"
    finally:
        await store.close()
    with sqlite3.connect(path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert "settings" not in tables
    # The broken held row and the unknown one are named before they go.
    dropped = [r.getMessage() for r in caplog.records if "dropped with" in r.getMessage()]
    assert len(dropped) == 1 and "held:src-9:1" in dropped[0] and "mystery" in dropped[0]
    again = await open_store(f"sqlite:///{path}")  # opening again changes nothing
    try:
        assert await again.schema_version() == LATEST_VERSION
        assert await again.kb_version.get() == "abcd1234"
    finally:
        await again.close()
