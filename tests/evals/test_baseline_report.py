"""Baseline merge and diff, the markdown report, threshold files and golden matching."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.baseline import Delta, deltas, load_baseline, updated_baseline, write_json
from evals.golden import load_thresholds, met, text_contains
from evals.models import MetricResult, RunResult, SuiteResult, Threshold
from evals.report import markdown
from shared.errors import BadInputError


def metric(value: float | None, *, bound: Threshold | None = None, better: str = "higher"):
    passed = None if bound is None or value is None else bound.allows(value)
    return MetricResult(value=value, better=better, threshold=bound, passed=passed)


def make_run(provider: str = "offline", **suites: SuiteResult) -> RunResult:
    return RunResult(run_id="20270101T000000Z", started_at="x", finished_at="y",
                     provider=provider, suites=suites)  # fmt: skip


def quiz_result(share: float, hits: float) -> SuiteResult:
    return SuiteResult(
        status="passed",
        prompt_versions={"quiz": "quiz-v2"},
        metrics={
            "topics_ok": metric(share, bound=Threshold(min=0.5)),
            "banned_phrase_hits": metric(hits, bound=Threshold(max=1), better="lower"),
            "questions": metric(45.0, better=None),  # type: ignore[arg-type]
        },
    )


def test_threshold_needs_exactly_one_bound_and_judges_inclusively() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Threshold(min=1, max=2)
    with pytest.raises(ValueError, match="exactly one"):
        Threshold()
    assert Threshold(min=0.9).allows(0.9) and not Threshold(min=0.9).allows(0.89)
    assert Threshold(max=0).allows(0) and not Threshold(max=0).allows(1)


def test_provider_block_overrides_single_default_thresholds(tmp_path: Path) -> None:
    path = tmp_path / "thresholds.yaml"
    path.write_text(
        "default:\n  a: {min: 1.0}\n  b: {max: 0}\nanthropic:\n  a: {min: 0.8}\n",
        encoding="utf-8",
    )
    assert load_thresholds(path, provider="offline") == {"a": Threshold(min=1.0),
                                                         "b": Threshold(max=0)}  # fmt: skip
    assert load_thresholds(path, provider="anthropic")["a"] == Threshold(min=0.8)
    path.write_text("default:\n  a: {min: 1}\nclaude:\n  a: {min: 0}\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="unknown block"):
        load_thresholds(path, provider="offline")
    path.write_text("default:\n  a: {at_least: 1}\n", encoding="utf-8")
    with pytest.raises(BadInputError, match=r"default\.a"):
        load_thresholds(path, provider="offline")


def test_expectations_match_any_alternative_ignoring_case_and_accents() -> None:
    assert text_contains("De incident commander CO\u00d6RDINEERT de aanpak", "coördineert")
    assert text_contains("Je krijgt 23 cent per kilometer", ["0,23", "23 cent"])
    assert not text_contains("Je krijgt een vergoeding", ["0,23", "23 cent"])
    assert met(["a", "b"], {"b", "c"}) and met("c", ["c"]) and not met(["x"], ["c"])


def test_delta_direction_decides_what_a_regression_is() -> None:
    assert Delta(0.9, 1.0).regressed("higher") and not Delta(1.0, 0.9).regressed("higher")
    assert Delta(2.0, 0.0).regressed("lower") and not Delta(0.0, 2.0).regressed("lower")
    assert not Delta(0.5, 1.0).regressed(None)  # informational metrics never regress
    assert Delta(None, 1.0).change is None and not Delta(1.0, None).regressed("higher")


def test_update_merges_per_provider_and_keeps_suites_that_did_not_run() -> None:
    doc = {"providers": {
        "anthropic": {"run_id": "a", "suites": {"quiz": {"metrics": {"topics_ok": 0.8}}}},
        "offline": {"run_id": "o", "suites": {"chat": {"metrics": {"turns_passed": 1.0}}}},
    }}  # fmt: skip
    run = make_run(quiz=quiz_result(1.0, 0.0), chat=SuiteResult(status="error", error="boom"))
    updated = updated_baseline(doc, run)
    assert updated["providers"]["anthropic"] == doc["providers"]["anthropic"]
    offline = updated["providers"]["offline"]
    assert offline["run_id"] == run.run_id
    # The errored chat suite keeps its old baseline; quiz is new.
    assert offline["suites"]["chat"] == {"metrics": {"turns_passed": 1.0}}
    assert offline["suites"]["quiz"] == {
        "prompt_versions": {"quiz": "quiz-v2"},
        "metrics": {"topics_ok": 1.0, "banned_phrase_hits": 0.0, "questions": 45.0},
    }


def test_markdown_reports_baseline_delta_regressions_and_prompt_changes() -> None:
    run = make_run(quiz=quiz_result(0.6, 1.0))
    entry = {"run_id": "20261201T000000Z", "suites": {"quiz": {
        "prompt_versions": {"quiz": "quiz-v1"},
        "metrics": {"topics_ok": 1.0, "banned_phrase_hits": 0.0},
    }}}  # fmt: skip
    report = markdown(run, baseline=entry)
    assert "baseline of run 20261201T000000Z" in report
    assert "| quiz | topics_ok | 0.600 | ≥ 0.5 | 1 | −0.400 | ok (regressed) |" in report
    assert "| quiz | banned_phrase_hits | 1 | ≤ 1 | 0 | +1.000 | ok (regressed) |" in report
    assert "| quiz | questions | 45 |  | n/a | n/a | info |" in report
    assert "quiz `quiz-v2` (baseline `quiz-v1`)" in report
    assert deltas(run, {})["quiz"]["topics_ok"].baseline is None
    assert "none stored for provider offline" in markdown(run, baseline={})


def test_baseline_file_round_trips_and_rejects_garbage(tmp_path: Path) -> None:
    path = tmp_path / "baseline.json"
    assert load_baseline(path)["providers"] == {}  # no file yet: empty
    write_json(path, updated_baseline(load_baseline(path), make_run(quiz=quiz_result(1, 0))))
    assert load_baseline(path)["providers"]["offline"]["suites"]["quiz"]["metrics"]["topics_ok"]
    assert path.stat().st_mode & 0o777 == 0o644
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(BadInputError, match="not a readable baseline"):
        load_baseline(path)
    path.write_text(json.dumps({"suites": {}}), encoding="utf-8")
    with pytest.raises(BadInputError, match="providers"):
        load_baseline(path)
