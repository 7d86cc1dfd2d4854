"""CLI commands: `r42 ops calls` — recent LLM calls and their cost per task and model."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from services.cli.kb import StoreOption, run_on_store, store_url
from services.cli.ops_audit import audit_command
from services.cli.ops_feedback import feedback_command, gaps_command
from shared.store import CallAggregate, LlmCall, Store


async def _gather(store: Store, last: int) -> dict[str, Any]:
    return {
        "calls": await store.llm_calls.last(last),
        "by_task": await store.llm_calls.aggregate(by="task"),
        "by_model": await store.llm_calls.aggregate(by="model"),
    }


def calls_table(calls: list[LlmCall]) -> Table:
    """The newest calls: time, task, model, tokens (incl. cache), duration, outcome."""
    table = Table(title=f"Last {len(calls)} LLM call(s)", title_justify="left")
    for name in ("time (UTC)", "task", "model"):
        table.add_column(name)
    for name in ("in", "out", "cache write", "cache read", "ms", "cost $"):
        table.add_column(name, justify="right")
    table.add_column("result")
    for call in calls:
        outcome = (
            Text("ok", style="green")
            if call.ok
            else Text(f"error: {call.error_msg or '?'}", style="red")
        )
        table.add_row(
            call.occurred_at.strftime("%Y-%m-%d %H:%M:%S"),
            Text(call.task),
            Text(call.model),
            str(call.input_tokens),
            str(call.output_tokens),
            str(call.cache_creation_input_tokens),
            str(call.cache_read_input_tokens),
            f"{call.duration_ms:.0f}",
            f"{call.cost_usd:.4f}",
            outcome,
        )
    return table


def cache_hit_rate(row: CallAggregate) -> float | None:
    """Share of the input tokens read from the prompt cache (None without input)."""
    total = row.input_tokens + row.cache_creation_input_tokens + row.cache_read_input_tokens
    return row.cache_read_input_tokens / total if total else None


def totals_table(rows: list[CallAggregate], *, by: str) -> Table:
    """Aggregate cost and tokens per task or model, with the cache hit rate."""
    table = Table(title=f"Cost per {by}", title_justify="left")
    table.add_column(by)
    for name in (
        "calls",
        "errors",
        "in",
        "out",
        "cache write",
        "cache read",
        "cache hit",
        "cost $",
    ):
        table.add_column(name, justify="right")
    for row in rows:
        table.add_row(
            Text(row.key),
            str(row.calls),
            str(row.errors),
            str(row.input_tokens),
            str(row.output_tokens),
            str(row.cache_creation_input_tokens),
            str(row.cache_read_input_tokens),
            "-" if (rate := cache_hit_rate(row)) is None else f"{rate:.0%}",
            f"{row.cost_usd:.4f}",
        )
    if rows:
        calls, errors = sum(r.calls for r in rows), sum(r.errors for r in rows)
        cost = f"{sum(r.cost_usd for r in rows):.4f}"
        table.add_row(
            Text("total", style="bold"), str(calls), str(errors), "", "", "", "", "", cost
        )
    return table


def calls_command(
    last: Annotated[
        int, typer.Option("--last", "-n", min=1, max=10_000, help="How many calls.")
    ] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    store: StoreOption = None,
) -> None:
    """Show the last LLM calls and the aggregate cost per task and per model."""
    data = run_on_store(store_url(store), lambda s: _gather(s, last))
    if as_json:
        payload = {
            key: [item.model_dump(mode="json") for item in items] for key, items in data.items()
        }
        for key in ("by_task", "by_model"):
            for item, row in zip(payload[key], data[key], strict=True):
                item["cache_hit_rate"] = cache_hit_rate(row)
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    console = Console(highlight=False)
    if not data["calls"]:
        console.print("no LLM calls recorded yet")
        return
    console.print(calls_table(data["calls"]))
    console.print(totals_table(data["by_task"], by="task"))
    console.print(totals_table(data["by_model"], by="model"))


def register(app: typer.Typer) -> None:
    """Register the ops commands on the root app."""
    ops = typer.Typer(
        name="ops",
        help="Operations: LLM call telemetry, the audit trail, feedback and gaps from the store.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
    )
    ops.command("calls")(calls_command)
    ops.command("audit")(audit_command)
    ops.command("feedback")(feedback_command)
    ops.command("gaps")(gaps_command)
    app.add_typer(ops, name="ops")
