"""The console's first-hour manners over the real services: greetings, prompts, help, /learn."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from services.gateway.console import render, run
from services.gateway.core.models import Progress
from tests.fakes.slack_server import FakeSlack
from tests.scenarios.stack import seed, stack_settings, start_stack, stop_stack
from tests.scenarios.test_console import Script

pytestmark = pytest.mark.timeout(120)

USER = "console-newcomer"


async def test_console_manners(
    nats_url: str, tmp_path: Path, fake_slack: FakeSlack, unique: str
) -> None:
    settings = stack_settings(nats_url=nats_url, tmp_path=tmp_path, fake=fake_slack)
    assert settings.admins and USER not in settings.admins
    await seed(settings)
    script = Script(
        [
            "hallo",
            "Goedemorgen!",
            "/help",
            "/graph",
            "/learn Verlof",
            "/learn Verlof slides",
            "Er is een rol Scrum Master die de sprints van het team begeleidt.",
            "misschien",
            "j",
            "/suggestions",
            "Hoe vraag ik verlof aan?",
            "x",
            "o",
            "/quit",
        ]
    )
    buffer = io.StringIO()
    stack = await start_stack(settings, fake=fake_slack, namespace=f"m{unique}")
    try:
        await run(
            settings=settings,
            input_fn=script,
            namespace=stack.gateway.namespace,
            user_id=USER,
            out=Console(file=buffer, width=140, highlight=False),
        )
    finally:
        await stop_stack(stack)
    out = buffer.getvalue()
    assert out.count("Hallo! Stel me een vraag") == 2
    assert "Dat staat niet in de kennisgraaf" not in out.split("/help")[0]
    # /help: everything, how to propose a topic, and the truth about the role.
    for command in ("/learn [ONDERWERP]", "/quiz", "/graph", "/suggestions", "/clear"):
        assert command in out
    assert "Een onderwerp voorstellen" in out
    assert "In de console ben je beheerder" not in out
    assert "R42_ADMINS noemt jou niet als beheerder" in out
    # /graph without a topic speaks console, not Slack.
    assert "/graph onboarding" in out and "/r42 graph" not in out
    # /learn TOPIC [format]
    assert "onbekend formaat" not in out
    assert out.count("Onderwerp: Verlof") == 2 and "1/" in out
    # An unknown answer at [j/n] is asked again, then taken.
    asks = [p for p in script.prompts if p.endswith("[j/n] ")]
    assert len(asks) == 2 and "Antwoord met j (ja) of n (nee)." in out
    assert "Voorstel ter beoordeling bij een beheerder" in out and "pending_review" not in out
    # The question typed at the review prompt is answered after the review.
    assert "Je vraag beantwoord ik na de beoordeling" in out
    assert "Kies g (goedkeuren), a (afwijzen) of o (overslaan)." in out
    after = out.split("Je vraag: Hoe vraag ik verlof aan?")[1]
    assert "[offline] Verlof" in after


def test_progress_counts_agree_in_number() -> None:
    done = Progress(state="completed", topics_added=1, relations_added=1)
    one = render.progress_line("a.md", done)
    assert one.plain == "a.md: klaar — 1 onderwerp toegevoegd, 0 bijgewerkt, 1 relatie toegevoegd"
    two = render.progress_line("a.md", Progress(state="completed", topics_added=2))
    assert "2 onderwerpen toegevoegd" in two.plain and "0 relaties toegevoegd" in two.plain
