"""`r42 quiz generate|take` and `r42 leaderboard` through typer's CliRunner on a real store."""

from __future__ import annotations

import asyncio
import getpass
import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner, Result

from services.cli import quiz
from services.quiz.models import TOOL_NAME
from shared.llm import LLMRuntime
from shared.store import iso_week, open_store
from tests.fakes.anthropic_server import FakeAnthropic, tool_reply
from tests.services.quiz.helpers import question, seed

ENV = {"COLUMNS": "200"}


def cli() -> typer.Typer:
    app = typer.Typer(pretty_exceptions_enable=False, no_args_is_help=True)

    @app.callback()
    def root() -> None:
        """Test root."""

    quiz.register(app)
    return app


def run(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli(), list(args), env=ENV, input=stdin)


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"sqlite:///{tmp_path}/cli.db"
    monkeypatch.setenv("R42_STORE", url)

    async def prepare() -> None:
        store = await open_store(url)
        await seed(store)
        await store.close()

    asyncio.run(prepare())
    yield url


def test_generate_adds_questions_then_none_on_repeat(db: str, monkeypatch) -> None:
    monkeypatch.setenv("R42_LLM", "offline")
    first = run("quiz", "generate", "Onboarding", "--count", "5", "--json")
    assert first.exit_code == 0, first.output
    doc = json.loads(first.output)
    assert doc["ok"] and doc["topic_id"] == "onboarding" and doc["offline"]
    assert len(doc["added"]) == 5 and doc["bank_size"] == 5

    table = run("quiz", "generate", "onboarding", "--count", "5")
    assert table.exit_code == 0, table.output
    assert "the bank now holds" in table.output


def test_generate_reports_a_rejected_batch(
    db: str, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(
        tool_reply(TOOL_NAME, {"questions": [question(options=["Ja", "Nee", "ja", "Soms"])]})
    )
    result = run("quiz", "generate", "onboarding")
    assert result.exit_code == 1
    assert "batch rejected, bank unchanged" in result.output
    assert "not 4 distinct answers" in result.output


def test_generate_unknown_topic_is_a_clean_error(db: str, monkeypatch) -> None:
    monkeypatch.setenv("R42_LLM", "offline")
    result = run("quiz", "generate", "nope")
    assert result.exit_code == 1
    assert "unknown topic 'nope'" in result.output and "Traceback" not in result.output


def test_take_asks_each_question_and_scores(db: str, monkeypatch) -> None:
    monkeypatch.setenv("R42_LLM", "offline")
    result = run("quiz", "take", "--user", "alice", stdin="A\n" * 10)
    assert result.exit_code == 0, result.output
    assert "vraag 1/10" in result.output and "vraag 10/10" in result.output
    assert "Klaar! Je score: " in result.output
    score = int(result.output.split("Klaar! Je score: ")[1].split("/")[0])

    board = run("leaderboard", "--week", "--json")
    assert board.exit_code == 0, board.output
    doc = json.loads(board.output)
    assert doc["week"] == iso_week()
    assert doc["entries"] == [{"rank": 1, "user": "alice", "points": score}]

    again = run("quiz", "take", "--user", "alice")
    assert again.exit_code == 1 and "al gedaan" in again.output


def test_take_refuses_an_invalid_choice_and_asks_again(db: str, monkeypatch) -> None:
    monkeypatch.setenv("R42_LLM", "offline")
    # One key scheme everywhere: A-D (either case); a number or another letter is asked again.
    result = run("quiz", "take", "--user", "bob", stdin="7\nE\n" + "b\n" * 10)
    assert result.exit_code == 0, result.output
    assert result.output.count("Kies een van A, B, C, D.") == 2
    assert "  A. " in result.output and "  D. " in result.output
    assert "Klaar! Je score: " in result.output


def test_leaderboard_empty(db: str) -> None:
    result = run("leaderboard")
    assert result.exit_code == 0 and "no scores yet" in result.output


def test_take_without_user_scores_the_console_identity(db: str, monkeypatch) -> None:
    """The console and `r42 quiz take` are the same person: one leaderboard line."""
    monkeypatch.setenv("R42_LLM", "offline")
    result = run("quiz", "take", stdin="A\n" * 10)
    assert result.exit_code == 0, result.output
    board = json.loads(run("leaderboard", "--week", "--json").output)
    assert [e["user"] for e in board["entries"]] == [f"console-{getpass.getuser()}"]


def bank_keys(url: str, topic: str) -> set[str]:
    async def read() -> set[str]:
        store = await open_store(url)
        try:
            bank = await store.quiz_banks.get(topic)
            return {q.key for q in bank.questions} if bank else set()
        finally:
            await store.close()

    return asyncio.run(read())


def test_bank_regenerate_replaces_the_bank_and_a_rejection_keeps_it(
    db: str, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    old = [question(text=f"Oude vraag {i} over onboarding?") for i in range(3)]
    fake_anthropic.enqueue(tool_reply(TOOL_NAME, {"questions": old}))
    assert run("quiz", "generate", "onboarding", "--count", "3").exit_code == 0
    before = bank_keys(db, "onboarding")
    assert len(before) == 3

    # The quality gate refuses the batch: the old bank stays, the reason is shown.
    fake_anthropic.enqueue(
        tool_reply(TOOL_NAME, {"questions": [question(options=["Ja", "Nee", "ja", "Soms"])]})
    )
    refused = run("quiz", "bank", "regenerate", "onboarding", "--count", "1")
    assert refused.exit_code == 1 and "not 4 distinct answers" in refused.output
    assert bank_keys(db, "onboarding") == before

    # A good batch replaces it; a question it repeats stays once.
    fresh = [question(text=f"Nieuwe vraag {i} over onboarding?") for i in range(2)]
    fake_anthropic.enqueue(tool_reply(TOOL_NAME, {"questions": [*fresh, old[0]]}))
    done = run("quiz", "bank", "regenerate", "onboarding", "--count", "3")
    assert done.exit_code == 0, done.output
    assert "2 new question(s), 2 old one(s) removed, 1 repeated and kept" in done.output
    after = bank_keys(db, "onboarding")
    assert len(after) == 3 and len(after & before) == 1
