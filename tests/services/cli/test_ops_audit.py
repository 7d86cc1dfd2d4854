"""`r42 ops audit`: the latest admin actions from a real SQLite store, at most 80 columns."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner, Result

from services.cli.main import build_app
from shared.store import AuditEntry, open_store

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def run(tmp_path: Path, *args: str) -> Result:
    env = {"R42_STORE": f"sqlite:///{tmp_path / 'r42.db'}", "R42_DATA_DIR": str(tmp_path),
           "COLUMNS": "200"}  # fmt: skip
    return CliRunner().invoke(build_app(), ["ops", "audit", *args], env=env)


def fill(tmp_path: Path, entries: list[AuditEntry]) -> None:
    async def go() -> None:
        store = await open_store(f"sqlite:///{tmp_path / 'r42.db'}")
        try:
            for entry in entries:
                await store.audit.record(entry)
        finally:
            await store.close()

    asyncio.run(go())


def entry(minute: int, **kw: object) -> AuditEntry:
    fields: dict[str, object] = {
        "actor": "UADMIN1", "action": "topic.edit", "target": "product-owner", "allowed": True,
        "before": {"learning_relevance": "standard", "relevance_locked": False},
        "after": {"learning_relevance": "core", "relevance_locked": True},
        "at": T0 + timedelta(minutes=minute), "surface": "cli",
    }  # fmt: skip
    return AuditEntry.model_validate({**fields, **kw})


def test_empty_trail_says_so(tmp_path: Path) -> None:
    result = run(tmp_path)
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "no admin actions recorded yet"


def test_lines_fit_80_columns_newest_first(tmp_path: Path) -> None:
    long_target = "a-very-long-topic-identifier-" * 6
    fill(tmp_path, [
        entry(0),
        entry(1, actor="UEVE-WITH-A-LONG-NAME", allowed=False, before=None,
              after={"requested": {"description": "x" * 300}}, surface="slack",
              action="topic.delete", target=long_target),
    ])  # fmt: skip
    result = run(tmp_path)
    assert result.exit_code == 0, result.output
    lines = result.output.rstrip("\n").split("\n")
    assert max(len(line) for line in lines) <= 80
    assert lines[0].startswith("time (UTC)")
    assert "REFUSED" in lines[2] and "topic.delete" in lines[2] and "slack" in lines[2]
    assert lines[2].endswith("…")  # the long target is clipped, not wrapped
    edit = next(i for i, line in enumerate(lines) if "topic.edit" in line)
    assert "2026-03-02 09:00" in lines[edit] and " ok " in lines[edit]
    assert "learning_relevance: standard -> core" in lines[edit + 1]
    assert "relevance_locked: false -> true" in lines[edit + 1]


def test_actor_filter_limit_and_json(tmp_path: Path) -> None:
    fill(tmp_path, [entry(i, actor="UA" if i % 2 else "UB", target=f"t{i}") for i in range(6)])
    result = run(tmp_path, "--actor", "UA", "--limit", "2", "--json")
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [(r["actor"], r["target"]) for r in rows] == [("UA", "t5"), ("UA", "t3")]
    assert rows[0]["at"].startswith("2026-03-02T09:05")


def test_bad_limit_is_one_clear_error(tmp_path: Path) -> None:
    result = run(tmp_path, "--limit", "0")
    assert result.exit_code == 2
    assert "--limit" in result.output
