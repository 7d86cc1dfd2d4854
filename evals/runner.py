"""Run eval suites in-process against the configured LLM provider and judge their metrics."""

from __future__ import annotations

import importlib
import importlib.util
import logging
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

from evals.golden import EVALS_DIR, THRESHOLDS_FILE, load_thresholds, suite_dir
from evals.llm import EvalLlm, eval_llm, usage_of
from evals.models import MetricResult, RunResult, SuiteResult, Threshold
from evals.suite import MetricSpec, SuiteContext, SuiteOutcome
from shared.config import Settings
from shared.errors import BadInputError, R42Error

log = logging.getLogger(__name__)

# Suite name → module; run in this order (cheap and model-free first).
SUITES: dict[str, str] = {
    "retrieval": "evals.suites.retrieval",
    "extraction": "evals.suites.extraction",
    "quiz": "evals.suites.quiz",
    "chat": "evals.suites.chat",
}
DEFAULT_SEED = 42


def run_id_for(moment: datetime) -> str:
    """The run's id and file stem: the start time as a basic ISO 8601 UTC timestamp."""
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def load_suite(name: str) -> ModuleType:
    """The suite module for a name (BadInputError for an unknown one)."""
    if name not in SUITES:
        raise BadInputError(f"unknown suite {name!r}; choose from {', '.join(SUITES)}")
    return importlib.import_module(SUITES[name])


def service_available(module: ModuleType) -> bool:
    """Whether the service code the suite evaluates is installed."""
    try:
        return importlib.util.find_spec(module.SERVICE) is not None
    except ModuleNotFoundError:
        return False


def prompt_versions(module: ModuleType) -> dict[str, str]:
    """PROMPT_VERSION of each prompt module the suite runs with, keyed by service name."""
    versions = {}
    for name in module.PROMPT_MODULES:
        version = getattr(importlib.import_module(name), "PROMPT_VERSION", None)
        if not isinstance(version, str) or not version.strip():
            raise BadInputError(f"{name} does not export a non-empty PROMPT_VERSION")
        versions[name.split(".")[1] if name.startswith("services.") else name] = version
    return versions


def judge(
    specs: Sequence[MetricSpec],
    values: dict[str, float | None],
    thresholds: dict[str, Threshold],
    *,
    suite: str,
) -> dict[str, MetricResult]:
    """Each metric's value with its threshold and verdict (None value: nothing to judge)."""
    names = [spec.name for spec in specs]
    unknown = sorted(set(thresholds) - set(names))
    if unknown:
        raise BadInputError(
            f"evals/{suite}/{THRESHOLDS_FILE}: unknown metric(s) {unknown}; "
            f"the suite reports {names}"
        )
    missing = sorted(set(names) - set(values))
    if missing:
        raise R42Error(f"suite {suite} did not report metric(s) {missing}")
    results = {}
    for spec in specs:
        value = values[spec.name]
        threshold = thresholds.get(spec.name)
        passed = None if threshold is None or value is None else threshold.allows(value)
        results[spec.name] = MetricResult(
            value=None if value is None else round(float(value), 6),
            better=spec.better,
            threshold=threshold,
            passed=passed,
            description=spec.description,
        )
    return results


async def run_suite(
    name: str, *, llm: EvalLlm, workdir: Path, limit: int | None, seed: int, root: Path
) -> SuiteResult:
    """Run one suite; its own failure becomes an `error` result, never an exception."""
    module = load_suite(name)
    if not service_available(module):
        return SuiteResult(status="skipped", notes=[f"{module.SERVICE} is not installed"])
    data_dir = suite_dir(name, root=root)
    started = time.perf_counter()
    sink_mark = len(llm.sink.records)
    versions: dict[str, str] = {}
    try:
        versions = prompt_versions(module)
        thresholds = load_thresholds(data_dir / THRESHOLDS_FILE, provider=llm.provider)
        suite_work = workdir / name
        suite_work.mkdir(parents=True, exist_ok=True)
        ctx = SuiteContext(llm=llm, data_dir=data_dir, workdir=suite_work, limit=limit, seed=seed)
        outcome: SuiteOutcome = await module.run(ctx)
        metrics = judge(module.METRICS, outcome.metrics, thresholds, suite=name)
    except Exception as exc:  # one broken suite must not hide the others' results
        log.warning("eval suite %s failed to run", name, exc_info=not isinstance(exc, R42Error))
        return SuiteResult(
            status="error",
            error=f"{type(exc).__name__}: {exc}",
            duration_s=round(time.perf_counter() - started, 3),
            prompt_versions=versions,
            llm=usage_of(llm.records_since(sink_mark)),
        )
    failed = any(metric.passed is False for metric in metrics.values())
    return SuiteResult(
        status="failed" if failed else "passed",
        duration_s=round(time.perf_counter() - started, 3),
        cases=outcome.cases,
        prompt_versions=versions,
        metrics=metrics,
        llm=usage_of(llm.records_since(sink_mark)),
        failures=outcome.failures,
        notes=outcome.notes,
    )


async def run_evals(
    *,
    settings: Settings,
    suites: Sequence[str] | None = None,
    limit: int | None = None,
    seed: int = DEFAULT_SEED,
    root: Path = EVALS_DIR,
) -> RunResult:
    """Run the named suites (all by default) in-process; stores live in a temp dir."""
    names = list(dict.fromkeys(suites)) if suites else list(SUITES)
    for name in names:
        load_suite(name)  # unknown names fail before anything runs
    if limit is not None and limit < 1:
        raise BadInputError(f"--limit must be at least 1, got {limit}")
    started = datetime.now(UTC)
    result_suites: dict[str, SuiteResult] = {}
    async with eval_llm(settings) as llm:
        with tempfile.TemporaryDirectory(prefix="r42-eval-") as tmp:
            for name in names:
                log.info("eval suite %s: running", name)
                result_suites[name] = await run_suite(
                    name, llm=llm, workdir=Path(tmp), limit=limit, seed=seed, root=root
                )
        total = usage_of(llm.sink.records)
    return RunResult(
        run_id=run_id_for(started),
        started_at=started.isoformat(),
        finished_at=datetime.now(UTC).isoformat(),
        provider=llm.provider,
        models=llm.models,
        limit=limit,
        seed=seed,
        suites=result_suites,
        llm=total,
    )
