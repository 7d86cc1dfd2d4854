"""The runner offline, in-process, on every suite: it completes and meets every threshold."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml

from evals.golden import EVALS_DIR, PROVIDERS, THRESHOLDS_FILE, load_thresholds
from evals.models import RunResult
from evals.runner import SUITES, load_suite, run_evals
from shared.config import build_settings
from shared.errors import BadInputError

LLM_SUITES = ("extraction", "quiz", "chat")


def run(root: Path, *suites: str, limit: int | None = None) -> RunResult:
    return asyncio.run(
        run_evals(settings=build_settings(llm="offline"), suites=suites, root=root, limit=limit)
    )


def test_every_suite_passes_offline_with_every_threshold_met(offline_run: RunResult) -> None:
    assert offline_run.provider == "offline"
    assert list(offline_run.suites) == list(SUITES)
    for name, suite in offline_run.suites.items():
        assert suite.status == "passed", (name, suite.error, suite.failed_metrics, suite.failures)
        assert suite.cases > 0
        if name != "retrieval":  # one golden question is a known retrieval miss (hit@3 < 1)
            assert not suite.failures, (name, suite.failures)
        thresholded = {m: r for m, r in suite.metrics.items() if r.threshold is not None}
        assert thresholded, name
        for metric, result in thresholded.items():
            assert result.value is not None, (name, metric)
            assert result.passed is True, (name, metric, result)
    assert offline_run.passed


def test_the_golden_sets_have_the_size_the_issue_asks_for(offline_run: RunResult) -> None:
    suites = offline_run.suites
    assert suites["retrieval"].cases >= 180  # ≥ 150 Dutch + ≥ 30 English
    assert suites["extraction"].cases >= 10
    assert suites["quiz"].cases == 5
    assert suites["chat"].cases >= 10


def test_llm_calls_are_counted_per_suite(offline_run: RunResult) -> None:
    suites = offline_run.suites
    assert suites["retrieval"].llm.calls == 0  # local BM25 only
    for name in LLM_SUITES:
        assert suites[name].llm.calls > 0 and suites[name].llm.failed == 0, name
    assert offline_run.llm.calls == sum(s.llm.calls for s in suites.values())
    # The extractor calls the model once per chunk; the quiz once per topic.
    assert suites["extraction"].llm.calls == suites["extraction"].metrics["chunks"].value
    assert suites["quiz"].llm.calls == suites["quiz"].cases


def test_quiz_shuffle_removes_the_offline_position_bias(offline_run: RunResult) -> None:
    metrics = offline_run.suites["quiz"].metrics
    # The offline "model" always puts the right answer first; the service must shuffle.
    assert metrics["model_position_max_share"].value == 1.0
    assert metrics["correct_index_max_share"].value < 0.45


@pytest.mark.parametrize("suite", list(SUITES))
@pytest.mark.parametrize("provider", PROVIDERS)
def test_thresholds_name_only_metrics_the_suite_reports(suite: str, provider: str) -> None:
    module = load_suite(suite)
    reported = {spec.name for spec in module.METRICS}
    thresholds = load_thresholds(EVALS_DIR / suite / THRESHOLDS_FILE, provider=provider)
    assert thresholds and set(thresholds) <= reported


def test_a_broken_expectation_fails_the_suite_and_names_the_case(golden_copy: Path) -> None:
    path = golden_copy / "extraction" / "golden.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    doc["cases"][1]["expect_topics"].append("agile-coach")  # no such heading in the text
    doc["cases"][7]["forbid_topics"].append("reiskosten-declareren")  # it is extracted
    path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    chat = golden_copy / "chat" / "golden.yaml"
    doc = yaml.safe_load(chat.read_text(encoding="utf-8"))
    doc["scripts"][0]["turns"][0]["anchors"].append("salarisverhoging")
    doc["scripts"][5]["turns"][0]["proposal"] = {"type": "role"}  # an out-of-KB question
    chat.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")

    result = run(golden_copy, "extraction", "chat")

    extraction = result.suites["extraction"]
    assert extraction.status == "failed"
    assert set(extraction.failed_metrics) == {"topic_recall", "cases_passed", "forbidden_topics"}
    failures = {f.case: f.reasons for f in extraction.failures}
    assert failures == {
        "rollen-front-matter": ["missing topic agile-coach"],
        "prompt-injectie": ["forbidden topic(s) ['reiskosten-declareren']"],
    }
    chat_result = result.suites["chat"]
    assert chat_result.status == "failed"
    assert {"anchor_rate", "proposal_rate", "turns_passed"} <= set(chat_result.failed_metrics)
    cases = {f.case for f in chat_result.failures}
    assert cases == {"lookup-rol-letterlijk #1", "buiten-kb-hoofdstad #1"}
    assert not result.passed


def test_a_tighter_threshold_fails_only_that_metric(golden_copy: Path) -> None:
    (golden_copy / "quiz" / THRESHOLDS_FILE).write_text(
        "default:\n  explanation_mean_chars: {min: 5000}\n", encoding="utf-8"
    )
    (golden_copy / "retrieval" / THRESHOLDS_FILE).write_text(
        "default:\n  hit@3: {min: 1.0}\n", encoding="utf-8"
    )
    result = run(golden_copy, "quiz", "retrieval")
    assert result.suites["quiz"].failed_metrics == ["explanation_mean_chars"]
    assert result.suites["retrieval"].failed_metrics == ["hit@3"]
    assert result.suites["retrieval"].metrics["hit@3"].value < 1.0


def test_a_broken_golden_file_is_a_suite_error_and_the_others_still_run(
    golden_copy: Path,
) -> None:
    (golden_copy / "chat" / "golden.yaml").write_text(
        "scripts:\n  - id: x\n    turns: [{say: hoi, expect_toolz: [lookup_topic]}]\n",
        encoding="utf-8",
    )
    (golden_copy / "quiz" / THRESHOLDS_FILE).write_text(
        "default:\n  no_such_metric: {min: 1}\n", encoding="utf-8"
    )
    result = run(golden_copy, "chat", "quiz", "retrieval")
    chat, quiz = result.suites["chat"], result.suites["quiz"]
    assert chat.status == "error" and "golden.yaml" in chat.error and "expect_toolz" in chat.error
    assert quiz.status == "error" and "no_such_metric" in quiz.error
    assert result.suites["retrieval"].status == "passed"
    assert not result.passed


def test_limit_runs_the_first_cases_only() -> None:
    result = run(EVALS_DIR, "chat", "retrieval", limit=2)
    assert result.limit == 2
    assert result.suites["chat"].cases == 2
    assert result.suites["retrieval"].cases == 2
    assert result.suites["retrieval"].metrics["questions"].value == 2


def test_unknown_suite_and_bad_limit_are_rejected_before_anything_runs() -> None:
    with pytest.raises(BadInputError, match="unknown suite 'nope'"):
        run(EVALS_DIR, "nope")
    with pytest.raises(BadInputError, match="--limit must be at least 1"):
        run(EVALS_DIR, "quiz", limit=0)


def test_a_suite_whose_service_is_not_installed_is_skipped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from types import SimpleNamespace

    import evals.runner as runner

    real = runner.load_suite
    monkeypatch.setattr(
        runner,
        "load_suite",
        lambda name: (
            SimpleNamespace(SERVICE="services.not_written_yet.service")
            if name == "chat"
            else real(name)
        ),
    )
    result = run(EVALS_DIR, "chat", "quiz", limit=1)
    chat = result.suites["chat"]
    assert chat.status == "skipped" and chat.notes == [
        "services.not_written_yet.service is not installed"
    ]
    assert result.suites["quiz"].status == "passed"
    assert result.passed  # a skipped suite does not fail the run
