"""The console chat over the real services (offline LLM), driven by scripted input lines."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console

from services.gateway.console import ask, run
from shared.store import iso_week
from tests.fakes.slack_server import FakeSlack
from tests.scenarios.stack import eventually, seed, stack_settings, start_stack, stop_stack

pytestmark = pytest.mark.timeout(120)

CONSOLE_USER = "console-tester"


class Script:
    """An input function answering prompts from a list, recording each prompt."""

    def __init__(self, lines: list[str]) -> None:
        self.lines: Iterator[str] = iter(lines)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        try:
            return next(self.lines)
        except StopIteration:
            raise EOFError from None


async def test_console_over_the_real_services(
    nats_url: str, tmp_path: Path, fake_slack: FakeSlack, unique: str
) -> None:
    settings = stack_settings(nats_url=nats_url, tmp_path=tmp_path, fake=fake_slack)
    await seed(settings)
    doc = tmp_path / "werkplek.md"
    doc.write_text(
        "# Werkplek\n\nEen werkplek reserveer je in de app.\n\n## Flexplekken\n\n"
        "Flexplekken zijn er op elke verdieping voor iedereen.\n"
    )
    binary = tmp_path / "logo.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00binary")
    script = Script(
        [
            "Hoe vraag ik verlof aan?",
            "Er is een rol Scrum Master die de sprints van het team begeleidt.",
            "j",
            "/suggestions",
            "g",
            "/learn",
            "/quiz",
            *["A"] * 10,
            "/leaderboard",
            f"/ingest {binary}",
            f"/ingest {doc}",
            "/sources",
            "/graph verlof",
            "/diagnostics",
            "/sync",
            "/frobnicate",
            "/clear",
            "/quit",
            "this line is never read",
        ]
    )
    buffer = io.StringIO()
    stack = await start_stack(settings, fake=fake_slack, namespace=f"c{unique}")
    try:
        await run(
            settings=settings,
            input_fn=script,
            namespace=stack.gateway.namespace,
            user_id=CONSOLE_USER,
            out=Console(file=buffer, width=140, highlight=False),
        )
        store = stack.store
        out = buffer.getvalue()
        atts = await store.quiz_attempts.list_for_user(CONSOLE_USER)
        score = await store.scores.get(CONSOLE_USER, iso_week())
        assert len(atts) == 1 and score is not None
        right = sum(a.correct for a in atts[0].answers.values())
        assert score.points == right, (atts, score)
        assert f"Quiz afgerond: {right} van de 10 goed" in out
        assert "goedgekeurd; de kennisgraaf wordt bijgewerkt" in out
        assert "[offline] Verlof" in out and "Bronnen: Verlof" in out
        assert (
            "Scrum Master" in out and "Voorstel ter beoordeling bij een beheerder" in out
        )  # R42_ADMINS holds Slack ids
        assert "pending_review" not in out
        # Approved in /suggestions; the extractor applies it on its own time.
        topic = await eventually(lambda: store.topics.get("scrum-master"), lambda t: t is not None)
        assert topic is not None and topic.type == "role", out
        assert "Kernpunten" in out
        assert "vraag 10/10" in out and "Quiz afgerond" in out
        assert "console-tester" in out.split(f"Deze week ({iso_week()})")[1]
        assert "binair" in out
        assert "werkplek.md: klaar" in out
        assert "Onbekend commando /frobnicate" in out
        # The extractor answers and re-checks the admin list server-side: this stack's
        # R42_ADMINS names Slack ids only, so the console user is refused there.
        assert "alleen beheerders kunnen het handboek synchroniseren" in out
        assert "Gesprek gewist" in out and out.rstrip().endswith("Tot ziens!")
        assert script.prompts.count("antwoord (A/B/C/D, of 'stop')> ") == 10
        assert "this line is never read" not in out
        assert any(
            s.name == "werkplek.md" and s.status == "completed" for s in await store.sources.list()
        )
    finally:
        await stop_stack(stack)


async def test_ask_returns_none_at_end_of_input() -> None:
    def closed(_prompt: str) -> str:
        raise EOFError

    assert await ask("> ", closed) is None
    assert await ask("> ", lambda _p: "hoi") == "hoi"
