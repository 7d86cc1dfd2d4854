"""CLI commands: `r42 ops feedback` (votes per ISO week and topic) and `r42 ops gaps`."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated, Any

import typer

from services.cli.kb import StoreOption, run_on_store, store_url
from services.gateway.core.insights import FeedbackReport, Gap, feedback_report

WIDTH = 80
WeeksOption = Annotated[
    int, typer.Option("--weeks", "-w", min=1, max=104, help="ISO weeks back, this one included.")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _rate(up: int, down: int) -> str:
    return f"{up / (up + down):.0%}" if up + down else "-"


def feedback_lines(report: FeedbackReport) -> list[str]:
    """Week totals, then votes per week and topic; no line over 80 characters."""
    lines = ["Votes on R42's answers per ISO week", f"{'week':<10}{'up':>6}{'down':>6}  approval"]
    lines.append("-" * WIDTH)
    for w in report.weeks:
        lines.append(f"{w.week:<10}{w.up:>6}{w.down:>6}  {_rate(w.up, w.down):>8}")
    lines += ["", "Per topic the answers used (an answer with two topics counts for both)"]
    label_width = WIDTH - 10 - 6 - 6 - 10
    lines.append(f"{'week':<10}{'topic':<{label_width}}{'up':>6}{'down':>6}  approval")
    lines.append("-" * WIDTH)
    by_downs = sorted(report.topics, key=lambda r: (r.week, -r.down, -r.total, r.label))
    for r in by_downs:
        label = _clip(r.label, label_width - 1)
        lines.append(
            f"{r.week:<10}{label:<{label_width}}{r.up:>6}{r.down:>6}  {_rate(r.up, r.down):>8}"
        )
    return lines


_WHY = {"down": "thumbs down", "unanswered": "unanswered"}


def gap_lines(gaps: list[Gap]) -> list[str]:
    """One line per question (with up to three comments under it), none over 80 characters."""
    head = f"{'n':>3}  {'why':<24}  {'last asked':<16}  question"
    lines = [head, "-" * WIDTH]
    for gap in gaps:
        why = ", ".join(_WHY[r] for r in sorted(gap.reasons))
        when = f"{gap.last_at:%Y-%m-%d %H:%M}" if gap.last_at else "-"
        row = f"{gap.count:>3}  {why:<24}  {when:<16}  "
        lines.append(row + _clip(gap.question, WIDTH - len(row)))
        lines += [_clip(f"{'':<5}“{c}”", WIDTH) for c in gap.comments]
    return lines


def _gap_json(gap: Gap) -> dict[str, Any]:
    data = asdict(gap)
    data["reasons"] = sorted(gap.reasons)
    data["last_at"] = gap.last_at.isoformat() if gap.last_at else None
    return data


def feedback_command(
    weeks: WeeksOption = 4, as_json: JsonOption = False, store: StoreOption = None
) -> None:
    """Show the 👍 / 👎 votes on R42's answers per ISO week and per topic."""
    report = run_on_store(store_url(store), lambda s: feedback_report(s, weeks=weeks, gaps=0))
    if as_json:
        payload = {
            "weeks": [asdict(w) | {"approval": w.rate} for w in report.weeks],
            "topics": [asdict(t) for t in report.topics],
        }
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    if not report.weeks:
        typer.echo(f"no votes on answers in the last {weeks} week(s)")
        return
    typer.echo("\n".join(feedback_lines(report)))


def gaps_command(
    weeks: WeeksOption = 4,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=500)] = 30,
    as_json: JsonOption = False,
    store: StoreOption = None,
) -> None:
    """Questions R42 could not answer or whose answer got a thumbs down, most frequent first."""
    report = run_on_store(store_url(store), lambda s: feedback_report(s, weeks=weeks, gaps=limit))
    if as_json:
        for gap in report.gaps:
            typer.echo(json.dumps(_gap_json(gap), ensure_ascii=False))
        return
    if not report.gaps:
        typer.echo(f"no unanswered or down-voted questions in the last {weeks} week(s)")
        return
    typer.echo("\n".join(gap_lines(report.gaps)))
