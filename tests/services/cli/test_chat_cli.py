"""`r42 kb search|context` and `r42 ask` in-process on a real SQLite store, offline LLM."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner, Result

from services.cli import chat, kb
from services.r42.knowledge import CONTEXT_MAX_TOPICS
from services.r42.prompts import QUIZ_REFUSAL
from shared.llm import reset_llm
from shared.store import open_store
from tests.fakes.anthropic_server import FakeAnthropic, server_error, text_reply
from tests.fakes.fixtures import FAKE_ANTHROPIC_API_KEY
from tests.services.r42.conftest import seeded_sqlite, start_quiz

ENV = {"COLUMNS": "250"}


def cli() -> typer.Typer:
    app = typer.Typer(pretty_exceptions_enable=False, no_args_is_help=True)

    @app.callback()
    def root() -> None:
        """Test root."""

    kb.register(app)
    chat.register(app)
    return app


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli(), list(args), env={**ENV, **(env or {})})


@pytest.fixture
def url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("R42_LLM", "offline")
    monkeypatch.setenv("R42_LIMITER", "off")
    store_url = seeded_sqlite(tmp_path / "cli.db")
    yield store_url
    reset_llm()


def test_kb_group_keeps_its_commands_and_gains_search_and_context() -> None:
    result = run("kb", "--help")
    assert result.exit_code == 0
    for command in ("import", "export", "stats", "search", "context"):
        assert command in result.stdout
    with pytest.raises(RuntimeError, match=r"after services\.cli\.kb"):
        chat.register(typer.Typer())


def test_search_ranks_topics(url: str) -> None:
    result = run("kb", "search", "verlof aanvragen", "--json", "--store", url)
    assert result.exit_code == 0, result.output
    hits = json.loads(result.stdout)
    assert hits[0] == {"id": "verlof", "label": "Verlof", "score": hits[0]["score"],
                       "verbatim": True}  # fmt: skip
    assert hits[0]["score"] > 0
    assert [h["score"] for h in hits[1:]] == sorted((h["score"] for h in hits[1:]), reverse=True)
    table = run("kb", "search", "product owner", "--k", "1", "--store", url)
    assert table.exit_code == 0 and "product-owner" in table.stdout and "verlof" not in table.stdout


def test_context_shows_the_block_and_its_token_estimate(url: str) -> None:
    result = run("kb", "context", "Wie leidt de sprint review?", "--json", "--store", url)
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    assert doc["topic_ids"][0] == "sprint-review" and len(doc["topic_ids"]) <= CONTEXT_MAX_TOPICS
    assert "[sprint-review] Sprint review (process)" in doc["text"]
    assert doc["token_estimate"] == -(-len(doc["text"]) // 4)
    plain = run("kb", "context", "Wie leidt de sprint review?", "--store", url)
    assert plain.exit_code == 0
    assert f"~{doc['token_estimate']} tokens" in plain.stdout and doc["kb_hash"] in plain.stdout


@pytest.mark.parametrize(
    "args", [["kb", "search", "  "], ["kb", "context", ""], ["ask", " "],
             ["kb", "search", "x", "--k", "0"]],
)  # fmt: skip
def test_bad_input_is_rejected_with_a_message(url: str, args: list[str]) -> None:
    result = run(*args, "--store", url)
    assert result.exit_code == 2
    assert "Traceback" not in result.output


def test_ask_runs_one_full_turn(url: str) -> None:
    result = run("ask", "Hoe vraag ik verlof aan?", "--store", url)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("[offline] Verlof: Verlof vraag je aan in het HR-portaal")
    assert "Bronnen: Verlof [verlof]" in result.stdout


def test_ask_prints_a_proposal(url: str) -> None:
    result = run("ask", "er is een rol Scrum master die de sprint review begeleidt",
                 "--user", "U7", "--json", "--store", url)  # fmt: skip
    assert result.exit_code == 0, result.output
    reply = json.loads(result.stdout)
    assert reply["proposal"]["delta"]["topics"][0]["id"] == "scrum-master"
    plain = run("ask", "er is een rol Agile coach die teams helpt", "--store", url)
    assert "Voorstel prop-" in plain.stdout and "Agile coach" in plain.stdout


def test_ask_respects_an_active_quiz(url: str) -> None:
    async def quiz() -> None:
        store = await open_store(url)
        await start_quiz(store, "U9")
        await store.close()

    asyncio.run(quiz())
    result = run("ask", "Hoe werkt verlof?", "--user", "U9", "--store", url)
    assert result.exit_code == 0 and result.stdout.strip() == QUIZ_REFUSAL


def test_ask_against_anthropic_reports_failures_cleanly(
    url: str, fake_anthropic: FakeAnthropic
) -> None:
    env = {"R42_LLM": "anthropic", "ANTHROPIC_BASE_URL": fake_anthropic.url,
           "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_API_KEY}  # fmt: skip
    fake_anthropic.enqueue(text_reply("Via het HR-portaal (Verlof)."))
    ok = run("ask", "Hoe werkt verlof?", "--store", url, env=env)
    assert ok.exit_code == 0, ok.output
    assert ok.stdout.startswith("Via het HR-portaal (Verlof).")
    fake_anthropic.enqueue(*[server_error(400)])
    failed = run("ask", "Hoe werkt verlof?", "--store", url, env=env)
    assert failed.exit_code == 1 and re.search(r"referentie door: r42-[0-9a-f]{8}", failed.stdout)
    assert FAKE_ANTHROPIC_API_KEY not in failed.output
    missing_key = run("ask", "Hoe werkt verlof?", "--store", url, env={"R42_LLM": "anthropic"})
    assert missing_key.exit_code == 1 and "ANTHROPIC_API_KEY" in missing_key.output
