"""`r42 eval` through typer's CliRunner: tables, files, exit codes, baseline, providers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner, Result

from services.cli import eval as eval_cli
from services.quiz.offline import offline_questions
from services.quiz.prompts import parse_request
from tests.fakes.anthropic_server import FakeAnthropic, Reply, text_reply, tool_reply
from tests.fakes.fixtures import FAKE_ANTHROPIC_API_KEY

ENV = {"COLUMNS": "200", "R42_LLM": "offline"}


def cli() -> typer.Typer:
    app = typer.Typer(pretty_exceptions_enable=False, no_args_is_help=True)

    @app.callback()
    def root() -> None:
        """Test root."""

    eval_cli.register(app)
    return app


def run(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    paths = ["--results-dir", str(tmp_path / "results"), "--baseline", str(tmp_path / "b.json")]
    return CliRunner().invoke(cli(), ["eval", *paths, *args], env=env or ENV)


def written(tmp_path: Path) -> list[str]:
    results = tmp_path / "results"
    return sorted(p.suffix for p in results.iterdir()) if results.exists() else []


def test_offline_run_prints_the_table_writes_results_and_updates_the_baseline(
    tmp_path: Path,
) -> None:
    result = run(tmp_path, "--suite", "retrieval", "--suite", "quiz", "--update-baseline")
    assert result.exit_code == 0, result.output
    for text in ("recall@10", "correct_index_max_share", "LLM calls", "PASSED",
                 "baseline updated for provider offline"):  # fmt: skip
        assert text in result.output
    assert written(tmp_path) == [".json", ".md"]
    run_doc = json.loads(next((tmp_path / "results").glob("*.json")).read_text())
    assert set(run_doc["suites"]) == {"retrieval", "quiz"} and run_doc["provider"] == "offline"
    assert run_doc["passed"] is True
    assert run_doc["suites"]["quiz"]["llm"]["calls"] == 5
    baseline = json.loads((tmp_path / "b.json").read_text())
    assert set(baseline["providers"]["offline"]["suites"]) == {"retrieval", "quiz"}

    again = run(tmp_path, "--suite", "quiz")
    assert again.exit_code == 0, again.output
    report = sorted((tmp_path / "results").glob("*.md"))[-1].read_text()
    assert "| quiz | topics_ok | 1 | ≥ 1 | 1 | = | ok |" in report


def test_a_metric_below_its_threshold_exits_1_and_keeps_the_baseline(
    tmp_path: Path, golden_copy: Path
) -> None:
    (golden_copy / "retrieval" / "thresholds.yaml").write_text(
        "default:\n  mrr: {min: 0.99}\n", encoding="utf-8"
    )
    result = run(tmp_path, "--suite", "retrieval", "--golden-dir", str(golden_copy),
                 "--update-baseline")  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "FAIL" in result.output and "baseline NOT updated" in result.output
    assert not (tmp_path / "b.json").exists()
    assert written(tmp_path) == [".json", ".md"]  # a failed run is still reported
    run_doc = json.loads(next((tmp_path / "results").glob("*.json")).read_text())
    assert run_doc["passed"] is False
    assert run_doc["suites"]["retrieval"]["metrics"]["mrr"]["passed"] is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--suite", "nope"], "unknown suite(s) nope"),
        (["--limit", "0"], "--limit must be at least 1"),
        (["--limit", "3", "--update-baseline"], "cannot become the baseline"),
        (["--provider", "gpt"], "--provider must be one of"),
        (["--golden-dir", "/no/such/dir"], "is not a directory"),
    ],
)
def test_bad_input_exits_2_with_a_message_and_writes_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    result = run(tmp_path, *args)
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
    assert written(tmp_path) == [] and not (tmp_path / "b.json").exists()


def test_anthropic_without_a_key_is_a_clean_config_error(tmp_path: Path) -> None:
    result = run(tmp_path, "--provider", "anthropic", "--suite", "quiz", env={"COLUMNS": "200"})
    assert result.exit_code == 2
    assert "ANTHROPIC_API_KEY" in result.output and "Traceback" not in result.output
    assert written(tmp_path) == []


def _claude_like(body: dict[str, Any]) -> Reply:
    """Answer quiz generation requests with valid questions, correct answer first."""
    last = body["messages"][-1]["content"]
    text = last if isinstance(last, str) else " ".join(b.get("text", "") for b in last)
    request = parse_request(text)
    if request is None:
        return text_reply("ok")
    return tool_reply("emit_quiz_questions", {"questions": offline_questions(request)})


def test_with_a_key_the_anthropic_provider_is_used_and_its_cost_counted(tmp_path: Path) -> None:
    with FakeAnthropic() as fake:
        fake.default = _claude_like
        env = {"COLUMNS": "200", "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_API_KEY,
               "ANTHROPIC_BASE_URL": fake.url, "R42_LIMITER": "off"}  # fmt: skip
        result = run(tmp_path, "--suite", "quiz", "--update-baseline", env=env)
        requests = fake.requests
    assert result.exit_code == 0, result.output
    assert len(requests) == 5 and all(r.path == "/v1/messages" for r in requests)
    assert FAKE_ANTHROPIC_API_KEY not in result.output
    run_doc = json.loads(next((tmp_path / "results").glob("*.json")).read_text())
    quiz = run_doc["suites"]["quiz"]
    assert run_doc["provider"] == "anthropic"
    assert run_doc["models"]["standard"] == requests[0].body["model"]
    assert quiz["llm"]["calls"] == 5 and quiz["llm"]["input_tokens"] > 0
    assert quiz["llm"]["cost_usd"] > 0 and run_doc["llm"]["cost_usd"] == quiz["llm"]["cost_usd"]
    # The anthropic block of thresholds.yaml applies (difficulty_coverage: min 0.8).
    assert quiz["metrics"]["difficulty_coverage"]["threshold"] == {"min": 0.8, "max": None}
    assert quiz["metrics"]["model_position_max_share"]["value"] == 1.0
    baseline = json.loads((tmp_path / "b.json").read_text())
    assert list(baseline["providers"]) == ["anthropic"]
