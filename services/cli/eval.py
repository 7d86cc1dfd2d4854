"""`r42 eval`: run the golden-set suites in-process, write results, compare with the baseline."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.text import Text

from evals.baseline import (
    BASELINE_FILE,
    RESULTS_DIR,
    baseline_for,
    load_baseline,
    updated_baseline,
    write_json,
)
from evals.golden import EVALS_DIR
from evals.report import print_run, write_run
from evals.runner import DEFAULT_SEED, SUITES, run_evals
from services.cli.eval_feedback import down_votes, write_cases
from services.cli.kb import StoreOption, fail, run_on_store, store_url
from shared.config import Settings, build_settings
from shared.errors import R42Error
from shared.store import describe_validation

PROVIDERS = ("auto", "offline", "anthropic")


def _settings(provider: str | None) -> Settings:
    if provider is not None and provider not in PROVIDERS:
        fail(f"--provider must be one of {', '.join(PROVIDERS)}, got {provider!r}", code=2)
    try:
        settings = build_settings()
    except ValidationError as exc:
        fail(f"invalid settings: {describe_validation(exc)}", code=2)
    return settings.model_copy(update={"llm": provider}) if provider else settings


def eval_command(
    suite: Annotated[
        list[str] | None,
        typer.Option("--suite", "-s", help=f"Suite to run (repeatable): {', '.join(SUITES)}."),
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option("--limit", help="Run only the first N cases of each suite (a quick sample)."),
    ] = None,
    update_baseline: Annotated[
        bool,
        typer.Option("--update-baseline", help="Store this run's metrics as the new baseline."),
    ] = False,
    provider: Annotated[
        str | None,
        typer.Option(
            "--provider",
            help="offline | anthropic | auto (default: anthropic when ANTHROPIC_API_KEY is set).",
            show_default=False,
        ),
    ] = None,
    results_dir: Annotated[
        Path, typer.Option("--results-dir", help="Where run results (JSON + markdown) go.")
    ] = RESULTS_DIR,
    baseline: Annotated[
        Path, typer.Option("--baseline", help="The baseline file to compare with and update.")
    ] = BASELINE_FILE,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the suites' randomness.")] = (
        DEFAULT_SEED
    ),
    golden_dir: Annotated[
        Path,
        typer.Option("--golden-dir", help="Folder with one sub-folder of golden data per suite."),
    ] = EVALS_DIR,
    from_feedback: Annotated[
        Path | None,
        typer.Option(
            "--from-feedback",
            help="Write the answers voted down into DIR/chat/ as eval cases (no run).",
            show_default=False,
        ),
    ] = None,
    weeks: Annotated[
        int, typer.Option("--weeks", min=1, max=104, help="With --from-feedback: weeks back.")
    ] = 4,
    store: StoreOption = None,
) -> None:
    """Run the eval suites against the configured LLM; exit 1 when a metric misses its bound."""
    if from_feedback is not None:
        _export_feedback(from_feedback, weeks=weeks, store=store)
        return
    unknown = [name for name in suite or [] if name not in SUITES]
    if unknown:
        fail(f"unknown suite(s) {', '.join(unknown)}; choose from {', '.join(SUITES)}", code=2)
    if limit is not None and limit < 1:
        fail(f"--limit must be at least 1, got {limit}", code=2)
    if not golden_dir.is_dir():
        fail(f"--golden-dir {golden_dir} is not a directory", code=2)
    if update_baseline and limit is not None:
        fail("a sampled run (--limit) cannot become the baseline; run without --limit", code=2)
    settings = _settings(provider)
    try:
        baseline_doc = load_baseline(baseline)
        run = asyncio.run(
            run_evals(settings=settings, suites=suite, limit=limit, seed=seed, root=golden_dir)
        )
    except R42Error as exc:
        fail(str(exc), code=2)
    except OSError as exc:  # e.g. the NATS limiter of a configured stack is unreachable
        fail(f"cannot run the evals: {exc}", code=2)
    entry = baseline_for(baseline_doc, run.provider)
    console = Console(highlight=False, soft_wrap=True)
    try:
        json_path, md_path = write_run(run, results_dir, baseline=entry)
    except OSError as exc:
        fail(f"cannot write results to {results_dir}: {exc.strerror or exc}")
    print_run(console, run, baseline=entry)
    console.print(Text(f"results: {json_path}\nreport:  {md_path}"))
    if update_baseline:
        if run.passed:
            write_json(baseline, updated_baseline(baseline_doc, run))
            console.print(Text(f"baseline updated for provider {run.provider}: {baseline}"))
        else:
            console.print(Text("baseline NOT updated: the run did not pass", style="yellow"))
    if not run.passed:
        bad = [name for name, result in run.suites.items() if result.status in ("failed", "error")]
        console.print(Text(f"FAILED: {', '.join(bad)}", style="bold red"))
        raise typer.Exit(1)
    console.print(Text("PASSED", style="bold green"))


def _export_feedback(out: Path, *, weeks: int, store: str | None) -> None:
    if out.resolve() == EVALS_DIR.resolve():
        fail("--from-feedback must not overwrite the shipped golden sets; give another DIR", code=2)
    url = store_url(store)
    votes = run_on_store(url, lambda s: down_votes(s, weeks=weeks))
    if not votes:
        typer.echo(f"no answers were voted down in the last {weeks} week(s); nothing written")
        return
    try:
        golden = write_cases(out, votes, store_url=url)
    except OSError as exc:
        fail(f"cannot write the cases to {out}: {exc.strerror or exc}")
    typer.echo(f"wrote {len(votes)} case(s) to {golden}")
    typer.echo(f"run them: r42 eval --suite chat --golden-dir {out}")


def register(app: typer.Typer) -> None:
    """Register `r42 eval` on the root app."""
    app.command("eval")(eval_command)
