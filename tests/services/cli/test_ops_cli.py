"""`r42 ops calls` over LLM call records stored in a real SQLite store."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner, Result

from services.cli import ops
from shared.llm.telemetry import LLMCallRecord
from shared.store import open_store

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def run(*args: str) -> Result:
    app = typer.Typer(pretty_exceptions_enable=False)

    @app.callback()
    def root() -> None:
        """Test root."""

    ops.register(app)
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "250"})


@pytest.fixture
def url(tmp_path: Path) -> str:
    records = [
        ("e1", "extract", "claude-haiku-4-5", 0,
         {"cost_usd": 0.004, "cache_read_input_tokens": 900}),
        ("e2", "extract", "claude-sonnet-4-5", 1, {"cost_usd": 0.030}),
        ("c1", "chat", "claude-sonnet-4-5", 2,
         {"ok": False, "error_msg": "overloaded", "output_tokens": 0, "cost_usd": 0.0}),
        ("q1", "quiz", "claude-haiku-4-5", 3,
         {"cost_usd": 0.002, "cache_creation_input_tokens": 2048}),
    ]  # fmt: skip
    store_url = f"sqlite:///{tmp_path / 'ops.db'}"

    async def fill() -> None:
        store = await open_store(store_url)
        try:
            for call_id, task, model, minute, extra in records:
                data = {"task": task, "model": model, "tier": "fast", "duration_ms": 1234.0,
                        "ok": True, "input_tokens": 1500, "output_tokens": 300,
                        "occurred_at": T0 + timedelta(minutes=minute), **extra}  # fmt: skip
                await store.llm_calls.add(LLMCallRecord.model_validate(data), call_id=call_id)
        finally:
            await store.close()

    asyncio.run(fill())
    return store_url


def test_tables_show_calls_and_costs(url: str) -> None:
    result = run("ops", "calls", "--store", url)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Last 4 LLM call(s)" in out and "Cost per task" in out and "Cost per model" in out
    quiz_line = next(ln for ln in out.splitlines() if "2026-03-02 09:03:00" in ln)
    assert "quiz" in quiz_line and "claude-haiku-4-5" in quiz_line and "2048" in quiz_line
    assert "1234" in quiz_line and "ok" in quiz_line
    assert any("chat" in ln and "error: overloaded" in ln for ln in out.splitlines())
    extract_total = next(ln for ln in out.splitlines() if ln.split("│")[1:2] == [" extract "])
    assert "0.0340" in extract_total and " 2 " in extract_total and "900" in extract_total
    total = next(ln for ln in out.splitlines() if " total " in ln)
    assert "0.0360" in total


def test_last_limits_the_listing(url: str) -> None:
    result = run("ops", "calls", "--last", "1", "--store", url)
    assert result.exit_code == 0
    assert "Last 1 LLM call(s)" in result.stdout
    assert "09:03:00" in result.stdout and "09:02:00" not in result.stdout


def test_json_output(url: str) -> None:
    result = run("ops", "calls", "--json", "--last", "2", "--store", url)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert [c["id"] for c in data["calls"]] == ["q1", "c1"]
    assert data["calls"][1]["ok"] is False and data["calls"][1]["error_msg"] == "overloaded"
    assert data["calls"][0]["cache_creation_input_tokens"] == 2048
    by_task = {row["key"]: row for row in data["by_task"]}
    assert by_task["extract"]["calls"] == 2
    assert by_task["extract"]["cost_usd"] == pytest.approx(0.034)
    assert by_task["chat"]["errors"] == 1
    assert [row["key"] for row in data["by_model"]] == ["claude-sonnet-4-5", "claude-haiku-4-5"]


def test_empty_store(tmp_path: Path) -> None:
    result = run("ops", "calls", "--store", f"sqlite:///{tmp_path / 'empty.db'}")
    assert result.exit_code == 0
    assert result.stdout.strip() == "no LLM calls recorded yet"


def test_bad_last_is_a_usage_error(url: str) -> None:
    result = run("ops", "calls", "--last", "0", "--store", url)
    assert result.exit_code == 2
    assert "Traceback" not in result.output


def test_cache_hit_rate_per_task(url: str) -> None:
    out = run("ops", "calls", "--store", url).stdout
    tasks = out.split("Cost per task")[1].split("Cost per model")[0].splitlines()
    extract = next(ln for ln in tasks if ln.split("│")[1:2] == [" extract "])
    quiz = next(ln for ln in tasks if [c.strip() for c in ln.split("│")[1:2]] == ["quiz"])
    assert " 23% " in extract  # 900 read of 1500 + 1500 + 900 input tokens
    assert " 0% " in quiz  # written to the cache, never read back
    data = json.loads(run("ops", "calls", "--json", "--store", url).stdout)
    rates = {row["key"]: row["cache_hit_rate"] for row in data["by_task"]}
    assert rates["extract"] == pytest.approx(900 / 3900) and rates["quiz"] == 0.0
