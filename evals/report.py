"""Presenting a run: the results JSON, a markdown report with the baseline diff, rich tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from evals.baseline import Delta, deltas, write_json
from evals.models import MetricResult, RunResult, SuiteResult

MAX_FAILURES_SHOWN = 20
_STATUS_STYLE = {"passed": "green", "failed": "red", "error": "red", "skipped": "yellow"}


def fmt(value: float | None) -> str:
    """A metric value for people: integers plain, fractions to three decimals."""
    if value is None:
        return "n/a"
    if float(value).is_integer():
        return f"{int(value)}"
    return f"{value:.3f}"


def fmt_change(delta: Delta) -> str:
    """+0.012 / −0.050 / = / n/a."""
    change = delta.change
    if change is None:
        return "n/a" if delta.baseline is None else ""
    if abs(change) < 1e-9:
        return "="
    return f"{change:+.3f}".replace("-", "−")


def verdict(metric: MetricResult) -> str:
    """ok / FAIL / info."""
    if metric.passed is None:
        return "info" if metric.threshold is None else "n/a"
    return "ok" if metric.passed else "FAIL"


def write_run(run: RunResult, results_dir: Path, *, baseline: dict[str, Any]) -> tuple[Path, Path]:
    """Write `<run_id>.json` and `<run_id>.md` into the results dir; returns both paths."""
    json_path = results_dir / f"{run.run_id}.json"
    md_path = results_dir / f"{run.run_id}.md"
    write_json(json_path, run.model_dump(mode="json"))
    md_path.write_text(markdown(run, baseline=baseline), encoding="utf-8")
    return json_path, md_path


def _suite_line(name: str, suite: SuiteResult) -> str:
    extra = f" — {suite.error}" if suite.error else ""
    notes = f" ({'; '.join(suite.notes)})" if suite.notes else ""
    timing = f"{suite.cases} case(s), {suite.duration_s:.1f} s"
    return f"- **{name}**: {suite.status}, {timing}{extra}{notes}"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(run: RunResult, *, baseline: dict[str, Any]) -> str:
    """The run as a markdown report, with each metric next to the stored baseline."""
    diff = deltas(run, baseline)
    base_id = baseline.get("run_id")
    base_line = (
        f"{run.provider} baseline of run {base_id}"
        if base_id
        else f"none stored for provider {run.provider}"
    )
    stored_suites = baseline.get("suites")
    base_suites = stored_suites if isinstance(stored_suites, dict) else {}
    lines = [
        f"# Eval run {run.run_id}",
        "",
        f"- result: **{'PASSED' if run.passed else 'FAILED'}**",
        f"- provider: {run.provider} (models: "
        + ", ".join(f"{tier} {model}" for tier, model in run.models.items())
        + ")",
        f"- limit: {run.limit if run.limit is not None else 'none'}, seed: {run.seed}",
        f"- baseline: {base_line}",
        f"- LLM calls: {run.llm.calls} ({run.llm.failed} failed), "
        f"{run.llm.input_tokens} input / {run.llm.output_tokens} output tokens, "
        f"${run.llm.cost_usd:.4f}",
        "",
        "## Suites",
        "",
        *(_suite_line(name, suite) for name, suite in run.suites.items()),
        "",
        "## Metrics",
        "",
        "| suite | metric | value | threshold | baseline | Δ | status |",
        "| --- | --- | ---: | --- | ---: | ---: | --- |",
    ]
    for name, suite in run.suites.items():
        for metric_name, metric in suite.metrics.items():
            delta = diff[name][metric_name]
            status = verdict(metric)
            if delta.regressed(metric.better):
                status += " (regressed)"
            lines.append(
                f"| {name} | {_cell(metric_name)} | {fmt(metric.value)} | "
                f"{metric.threshold.describe() if metric.threshold else ''} | "
                f"{fmt(delta.baseline)} | {fmt_change(delta)} | {status} |"
            )
    lines += ["", "## LLM calls", "", "| suite | calls | failed | input tokens | "
              "output tokens | cost (USD) | stop reasons |", "| --- | ---: | ---: | ---: | ---: "
              "| ---: | --- |"]  # fmt: skip
    for name, suite in run.suites.items():
        usage = suite.llm
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(usage.stop_reasons.items()))
        lines.append(
            f"| {name} | {usage.calls} | {usage.failed} | {usage.input_tokens} | "
            f"{usage.output_tokens} | {usage.cost_usd:.4f} | {reasons} |"
        )
    lines += ["", "## Prompt versions", ""]
    for name, suite in run.suites.items():
        before = (base_suites.get(name) or {}).get("prompt_versions") or {}
        versions = ", ".join(
            f"{k} `{v}`" + (f" (baseline `{before[k]}`)" if before.get(k, v) != v else "")
            for k, v in suite.prompt_versions.items()
        )
        lines.append(f"- {name}: {versions or 'no prompts (no model calls)'}")
    failing = {name: s for name, s in run.suites.items() if s.failures}
    if failing:
        lines += ["", "## Cases that missed expectations", ""]
        for name, suite in failing.items():
            lines.append(f"### {name} ({len(suite.failures)})")
            lines.append("")
            for failure in suite.failures[:MAX_FAILURES_SHOWN]:
                lines.append(f"- `{_cell(failure.case)}`: {_cell('; '.join(failure.reasons))}")
            if len(suite.failures) > MAX_FAILURES_SHOWN:
                lines.append(f"- … {len(suite.failures) - MAX_FAILURES_SHOWN} more in the JSON")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def metric_tables(run: RunResult, *, baseline: dict[str, Any]) -> list[Table]:
    """One metric table per suite, as printed at the end of a run."""
    diff = deltas(run, baseline)
    tables = []
    for name, suite in run.suites.items():
        style = _STATUS_STYLE[suite.status]
        table = Table(title=Text.assemble((f"{name}: ", "bold"), (suite.status, style)),
                      title_justify="left")  # fmt: skip
        table.add_column("metric", no_wrap=True)
        for column in ("value", "threshold", "baseline", "Δ"):
            table.add_column(column, justify="left" if column == "threshold" else "right")
        table.add_column("status")
        if not suite.metrics:
            table.add_row(Text(suite.error or "; ".join(suite.notes) or suite.status, style),
                          "", "", "", "", "")  # fmt: skip
        for metric_name, metric in suite.metrics.items():
            delta = diff[name][metric_name]
            status = verdict(metric)
            change = Text(fmt_change(delta), style="red" if delta.regressed(metric.better) else "")
            table.add_row(
                Text(metric_name), fmt(metric.value),
                metric.threshold.describe() if metric.threshold else "",
                fmt(delta.baseline), change,
                Text(status, style={"ok": "green", "FAIL": "bold red"}.get(status, "dim")),
            )  # fmt: skip
        tables.append(table)
    return tables


def usage_table(run: RunResult) -> Table:
    """LLM calls and cost per suite (telemetry from the MemorySink)."""
    table = Table(title="LLM calls", title_justify="left")
    for column in ("suite", "calls", "failed", "input tok", "output tok", "cost USD"):
        table.add_column(column, justify="left" if column == "suite" else "right")
    for name, suite in [*run.suites.items(), ("total", None)]:
        usage = run.llm if suite is None else suite.llm
        table.add_row(
            Text(name, style="bold" if suite is None else ""), str(usage.calls),
            str(usage.failed), str(usage.input_tokens), str(usage.output_tokens),
            f"{usage.cost_usd:.4f}",
        )  # fmt: skip
    return table


def print_run(console: Console, run: RunResult, *, baseline: dict[str, Any]) -> None:
    """Print the metric table, the telemetry table and the failing cases."""
    console.print(Text(f"Eval {run.run_id} · provider {run.provider}", style="bold"))
    for table in metric_tables(run, baseline=baseline):
        console.print(table)
    console.print(usage_table(run))
    for name, suite in run.suites.items():
        for failure in suite.failures[:5]:
            console.print(Text(f"  {name}: {failure.case}: {'; '.join(failure.reasons)}"[:300]))
        if len(suite.failures) > 5:
            console.print(Text(f"  {name}: … {len(suite.failures) - 5} more (see the report)"))
