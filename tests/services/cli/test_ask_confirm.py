"""`r42 ask`: a natural request makes a proposal, and `ja` / --confirm / --decline decide it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from services.cli.main import build_app
from shared.llm import reset_llm
from shared.store import open_store
from tests.services.r42.conftest import seeded_sqlite

REQUEST = "Kun je een onderwerp toevoegen over thuiswerken? Iedereen mag twee dagen thuis werken."


@pytest.fixture
def url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("R42_LLM", "offline")
    monkeypatch.setenv("R42_LIMITER", "off")
    monkeypatch.setenv("R42_DATA_DIR", str(tmp_path / "data"))  # no `r42 up` recorded there
    store_url = seeded_sqlite(tmp_path / "cli.db")
    yield store_url
    reset_llm()


def r42(*args: str) -> Result:
    argv = list(args)
    return CliRunner().invoke(build_app(argv), argv, env={"COLUMNS": "200"})


def suggestions(url: str) -> list[tuple[str, str]]:
    async def read() -> list[tuple[str, str]]:
        store = await open_store(url)
        try:
            return [(s.id, s.status) for s in await store.suggestions.list()]
        finally:
            await store.close()

    return asyncio.run(read())


def test_ja_as_the_next_message_queues_the_proposal_for_review(url: str) -> None:
    asked = r42("ask", "--user", "U123", REQUEST, "--store", url)
    assert asked.exit_code == 0, asked.output
    assert "Voorstel prop-" in asked.stdout and "Thuiswerken" in asked.stdout
    assert "--user U123 --confirm" in asked.stdout
    proposal_id = asked.stdout.split("Voorstel ", 1)[1].split(":", 1)[0]

    confirmed = r42("ask", "--user", "U123", "ja", "--store", url)
    assert confirmed.exit_code == 0, confirmed.output
    assert confirmed.stdout.strip() == (
        f"proposal {proposal_id}: queued for review by an admin (see `/suggestions` in the console)"
    )
    assert suggestions(url) == [(f"r42-{proposal_id}", "pending")]

    again = r42("ask", "--user", "U123", "--confirm", "--store", url)
    assert again.exit_code == 1
    assert "error: no open proposal for U123; ask R42 to add something first" in again.output


def test_decline_and_another_users_proposal(url: str) -> None:
    asked = r42("ask", "--user", "U123", "Voeg een proces Laptop aanvragen toe", "--store", url)
    assert asked.exit_code == 0 and "Voorstel prop-" in asked.stdout, asked.output
    proposal_id = asked.stdout.split("Voorstel ", 1)[1].split(":", 1)[0]

    # Someone else's `ja` is an ordinary message: their own conversation has no proposal.
    other = r42("ask", "--user", "U999", "ja", "--store", url)
    assert other.exit_code == 0 and "proposal" not in other.stdout
    stolen = r42("ask", "--user", "U999", "--confirm", "--proposal", proposal_id, "--store", url)
    assert stolen.exit_code == 1
    assert "only the user the proposal was made to" in stolen.output

    declined = r42("ask", "--user", "U123", "--decline", "--store", url)
    assert declined.exit_code == 0, declined.output
    assert "declined: nothing was submitted" in declined.stdout
    assert suggestions(url) == []
    both = r42("ask", "--user", "U123", "--confirm", "--decline", "--store", url)
    assert both.exit_code == 2 and "not both" in both.output
