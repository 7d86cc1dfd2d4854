"""CLI commands: `r42 quiz generate|take` and `r42 leaderboard`, in-process on the configured
store and LLM, through the same service functions the quiz service runs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.panel import Panel
from rich.prompt import Prompt
from rich.table import Table
from rich.text import Text

from services.cli.kb import StoreOption, fail
from services.quiz.attempts import (
    QuizConfig,
    answer_question,
    leaderboard,
    on_demand_generator,
    start_quiz,
)
from services.quiz.gate import fold
from services.quiz.generation import GenerationResult, generate_questions, regenerate_bank
from services.quiz.models import MAX_BATCH
from services.quiz.offline import offline_plans
from shared.config import Settings, build_settings
from shared.errors import R42Error
from shared.identity import local_user_id
from shared.llm import LLMCallRecord, configure_llm, reset_llm
from shared.store import (
    AuditEntry,
    LeaderboardEntry,
    Store,
    describe_validation,
    iso_week,
    open_store,
)

T = TypeVar("T")
DIFFICULTY_NL = {"easy": "makkelijk", "medium": "gemiddeld", "hard": "moeilijk"}


class StoreSink:
    """Telemetry for in-process calls: records go straight to the store's llm_calls."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._tasks: set[asyncio.Task[Any]] = set()

    def emit(self, record: LLMCallRecord) -> None:
        """Schedule the write (never blocks the call)."""
        task = asyncio.get_running_loop().create_task(self._store.llm_calls.add(record))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self) -> None:
        """Wait for pending writes (a failed write is not worth failing the command)."""
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)


def _settings(store: str | None) -> Settings:
    try:
        settings = build_settings()
    except ValidationError as exc:
        fail(f"invalid settings: {describe_validation(exc)}")
    return settings.model_copy(update={"store": store}) if store else settings


def run_with_quiz[T](settings: Settings, action: Callable[[Store], Awaitable[T]]) -> T:
    """Open the store, configure the LLM (offline questions registered), run, clean up."""

    async def main() -> T:
        store = await open_store(settings.store_url)
        sink = StoreSink(store)
        try:
            configure_llm(settings, sink=sink, offline_plans=offline_plans())
            return await action(store)
        finally:
            await sink.drain()
            reset_llm()
            await store.close()

    try:
        return asyncio.run(main())
    except R42Error as exc:
        fail(str(exc))


async def _resolve_topic(store: Store, ref: str) -> str:
    if await store.topics.get(ref) is not None:
        return ref
    matches = [t.id for t in await store.topics.list() if fold(t.label) == fold(ref)]
    if len(matches) == 1:
        return matches[0]
    hint = f"; it matches several labels: {', '.join(matches)}" if matches else ""
    fail(f"unknown topic {ref!r} (give a topic id or its exact label){hint}")


def _generation_json(result: GenerationResult, bank_size: int) -> dict[str, Any]:
    return {
        "topic_id": result.topic_id,
        "ok": result.ok,
        "rejected": result.rejected,
        "added": [q.model_dump(mode="json") for q in result.added],
        "duplicates": result.duplicates,
        "bank_size": bank_size,
        "offline": result.offline,
    }


def generate_command(
    topic: Annotated[str, typer.Argument(help="Topic id (or its exact label).")],
    count: Annotated[
        int, typer.Option("--count", "-n", min=1, max=MAX_BATCH, help="Questions to ask for.")
    ] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    store: StoreOption = None,
) -> None:
    """Generate questions for a topic's bank (quality gate, shuffled options, no duplicates)."""

    async def action(s: Store) -> tuple[GenerationResult, int]:
        topic_id = await _resolve_topic(s, topic)
        result = await generate_questions(store=s, topic_id=topic_id, count=count)
        bank = await s.quiz_banks.get(topic_id)
        return result, len(bank.questions) if bank else 0

    result, bank_size = run_with_quiz(_settings(store), action)
    if as_json:
        typer.echo(json.dumps(_generation_json(result, bank_size), ensure_ascii=False, indent=2))
        if not result.ok:
            raise typer.Exit(1)
        return
    if not result.ok:
        fail(f"batch rejected, bank unchanged: {result.rejected}")
    console = Console(highlight=False)
    table = Table(title=f"Added {len(result.added)} question(s) to {result.topic_id}")
    for name in ("difficulty", "question", "correct answer"):
        table.add_column(name, overflow="fold")
    for q in result.added:
        table.add_row(q.difficulty, Text(q.text), Text(q.options[q.correct_index]))
    console.print(table)
    offline = " (offline provider)" if result.offline else ""
    console.print(
        f"{len(result.duplicates)} duplicate(s) dropped; the bank now holds "
        f"{bank_size} question(s){offline}"
    )


def bank_regenerate_command(
    topic: Annotated[str, typer.Argument(help="Topic id (or its exact label).")],
    count: Annotated[
        int, typer.Option("--count", "-n", min=1, max=MAX_BATCH, help="Questions to ask for.")
    ] = 10,
    store: StoreOption = None,
) -> None:
    """Replace a topic's quiz bank with a fresh batch (a rejected batch changes nothing)."""
    user = local_user_id()

    async def action(s: Store) -> tuple[GenerationResult, int, int]:
        topic_id = await _resolve_topic(s, topic)
        result, removed = await regenerate_bank(store=s, topic_id=topic_id, count=count)
        bank = await s.quiz_banks.get(topic_id)
        after = {"added": len(result.added), "removed": removed,
                 "rejected": result.rejected}  # fmt: skip
        await s.audit.record(AuditEntry(actor=user, action="quiz.bank_regenerate",
                                        target=topic_id, allowed=True, after=after,
                                        surface="cli"))  # fmt: skip
        return result, removed, len(bank.questions) if bank else 0

    result, removed, size = run_with_quiz(_settings(store), action)
    if not result.ok:
        fail(f"batch rejected, bank unchanged: {result.rejected}")
    Console(highlight=False).print(
        f"{result.topic_id}: {len(result.added)} new question(s), {removed} old one(s) removed, "
        f"{len(result.duplicates)} repeated and kept; the bank now holds {size} question(s)"
    )


ANSWER_KEYS = "ABCDEFGH"
"""Answer keys as every surface shows them (A-D for the four options a quiz has)."""


def ask_answer(keys: str, *, console: Console) -> str:
    """Ask until the answer is one of the keys (either case); an unknown one is said once."""
    while True:
        picked = Prompt.ask(f"Jouw antwoord ({'/'.join(keys)})", console=console).strip().upper()
        if len(picked) == 1 and picked in keys:
            return picked
        console.print(Text(f"Kies een van {', '.join(keys)}.", style="yellow"))


async def _take(store: Store, *, user: str, week: str, console: Console) -> None:
    config = QuizConfig()
    started = await start_quiz(
        store=store, user_id=user, week=week, config=config,
        generate=on_demand_generator(store, config),
    )  # fmt: skip
    attempt_id = started.attempt.id
    question: dict[str, Any] | None = started.question
    console.print(Text(f"Quiz van week {started.attempt.week} voor {user}", style="bold"))
    while question is not None:
        body = Text(question["text"] + "\n\n")
        keys = ANSWER_KEYS[: len(question["options"])]
        for key, option in zip(keys, question["options"], strict=True):
            body.append(f"  {key}. {option}\n")
        level = DIFFICULTY_NL.get(question["difficulty"], question["difficulty"])
        title = f"vraag {question['index'] + 1}/{question['count']} · {question['topic_label']}"
        console.print(Panel(body, title=Text(title), subtitle=level, title_align="left"))
        picked = ask_answer(keys, console=console)
        outcome = await answer_question(
            store=store, attempt_id=attempt_id, user_id=user,
            question_index=question["index"], choice=keys.index(picked), config=config,
        )  # fmt: skip
        right = question["options"][outcome.correct_index]
        if outcome.correct:
            console.print(Text("✓ Goed!", style="bold green"))
        else:
            console.print(Text(f"✗ Fout. Het juiste antwoord: {right}", style="bold red"))
        console.print(Text(outcome.explanation, style="dim"))
        question = outcome.next_question
        if outcome.finished:
            total = len(outcome.attempt.question_keys)
            console.print(Text(f"Klaar! Je score: {outcome.score}/{total}", style="bold"))


def take_command(
    user: Annotated[
        str | None,
        typer.Option("--user", "-u", help="Who takes it (default: you, as in the console)."),
    ] = None,
    store: StoreOption = None,
) -> None:
    """Take this week's quiz in the terminal: one question at a time, scored as you go."""
    # The console's id for the same person: one line on the leaderboard, not two.
    who = user if user is not None else local_user_id()
    if not who.strip():
        fail("--user must not be empty")
    console = Console(highlight=False)
    try:
        run_with_quiz(
            _settings(store),
            lambda s: _take(s, user=who.strip(), week=iso_week(), console=console),
        )
    except (EOFError, KeyboardInterrupt):
        fail("quiz interrupted; run `r42 quiz take` again to continue before it times out")


def _board_table(rows: list[LeaderboardEntry], title: str) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("#", justify="right")
    table.add_column("user")
    table.add_column("points", justify="right")
    for row in rows:
        table.add_row(str(row.rank), Text(row.user), str(row.points))
    return table


def leaderboard_command(
    week: Annotated[
        bool, typer.Option("--week", help="This ISO week only (default: all time).")
    ] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=1000)] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    store: StoreOption = None,
) -> None:
    """Show the quiz leaderboard: all time, or this week with --week."""
    which = iso_week() if week else None
    rows = run_with_quiz(_settings(store), lambda s: leaderboard(store=s, week=which, limit=limit))
    if as_json:
        payload = {"week": which, "entries": [r.model_dump(mode="json") for r in rows]}
        typer.echo(json.dumps(payload, ensure_ascii=False, indent=2))
        return
    console = Console(highlight=False)
    if not rows:
        console.print("no scores yet")
        return
    console.print(_board_table(rows, f"Leaderboard {which}" if which else "Leaderboard (all time)"))


def register(app: typer.Typer) -> None:
    """Register `quiz generate|take` and `leaderboard` on the root app."""
    quiz = typer.Typer(
        name="quiz",
        help="Weekly quizzes: generate question banks, take this week's quiz.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
    )
    quiz.command("generate")(generate_command)
    quiz.command("take")(take_command)
    bank = typer.Typer(help="A topic's question bank.", no_args_is_help=True)
    bank.command("regenerate")(bank_regenerate_command)
    quiz.add_typer(bank, name="bank")
    app.add_typer(quiz, name="quiz")
    app.command("leaderboard")(leaderboard_command)
