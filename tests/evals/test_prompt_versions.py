"""Prompt versioning: every prompt module exports PROMPT_VERSION; every suite records them."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

from evals.baseline import load_baseline
from evals.models import RunResult
from evals.report import write_run
from evals.runner import SUITES, load_suite

SERVICES_DIR = Path(__file__).resolve().parents[2] / "services"
# Suites whose code paths call a model, and the artifacts that must carry the version.
STAMPED = ("extraction", "quiz", "chat")


def prompt_modules() -> list[str]:
    return sorted(f"services.{p.parent.name}.prompts" for p in SERVICES_DIR.glob("*/prompts.py"))


def test_every_services_prompt_module_exports_a_non_empty_version() -> None:
    modules = prompt_modules()
    # The services the issue names; more may come, none may go without this test noticing.
    assert {"services.extractor.prompts", "services.quiz.prompts", "services.r42.prompts",
            "services.content.prompts"} <= set(modules)  # fmt: skip
    for name in modules:
        version = getattr(importlib.import_module(name), "PROMPT_VERSION", None)
        assert isinstance(version, str) and version.strip(), name


def test_each_suite_records_the_prompt_versions_it_ran_with(offline_run: RunResult) -> None:
    for name in SUITES:
        module = load_suite(name)
        expected = {
            mod.split(".")[1]: importlib.import_module(mod).PROMPT_VERSION
            for mod in module.PROMPT_MODULES
        }
        assert offline_run.suites[name].prompt_versions == expected, name
    for name in STAMPED:
        assert offline_run.suites[name].prompt_versions, name
    assert offline_run.suites["retrieval"].prompt_versions == {}  # no model, no prompt


def test_generated_artifacts_carry_the_running_prompt_version(offline_run: RunResult) -> None:
    # Topic metadata (extraction), quiz questions and R42's proposals, checked in the store.
    for name in STAMPED:
        metric = offline_run.suites[name].metrics["prompt_version_stamped"]
        assert metric.value == 1.0 and metric.passed, name


def test_results_and_report_carry_the_prompt_versions(
    offline_run: RunResult, tmp_path: Path
) -> None:
    json_path, md_path = write_run(offline_run, tmp_path, baseline={})
    doc = json.loads(json_path.read_text(encoding="utf-8"))
    assert doc["suites"]["quiz"]["prompt_versions"] == offline_run.suites["quiz"].prompt_versions
    report = md_path.read_text(encoding="utf-8")
    for name in STAMPED:
        for version in offline_run.suites[name].prompt_versions.values():
            assert f"`{version}`" in report


def test_the_committed_baseline_covers_every_suite_and_metric() -> None:
    entry = load_baseline()["providers"]["offline"]
    for name in SUITES:
        stored = entry["suites"][name]
        reported = {spec.name for spec in load_suite(name).METRICS}
        assert set(stored["metrics"]) == reported, (
            f"{name}: run `r42 eval --update-baseline` after changing a suite's metrics"
        )
        assert set(stored["prompt_versions"]) == {
            m.split(".")[1] for m in load_suite(name).PROMPT_MODULES
        }
