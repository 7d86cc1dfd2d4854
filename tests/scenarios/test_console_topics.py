"""Console topic commands over the real KG owner: card, edit with lock, relate, merge, delete
(with its confirmation), bad input; the console user is an admin in the embedded runtime."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from services.gateway.console import run
from tests.fakes.slack_server import FakeSlack
from tests.scenarios.stack import eventually, seed, stack_settings, start_stack, stop_stack
from tests.scenarios.test_console import CONSOLE_USER, Script

pytestmark = pytest.mark.timeout(120)


async def test_topic_commands_in_the_console(
    nats_url: str, tmp_path: Path, fake_slack: FakeSlack, unique: str
) -> None:
    settings = stack_settings(nats_url=nats_url, tmp_path=tmp_path, fake=fake_slack)
    await seed(settings)
    script = Script([
        "/topic verl",
        '/topic edit verlof --relevance standard --lock --description "Vrij nemen, zo."',
        "/topic edit verlof --relevance hoog",
        "/topic relate declaraties teamlead --type executed_by",
        "/topic merge declaraties hr-portaal",
        "/topic delete teamlead",
        "n",
        "/topic delete teamlead",
        "j",
        "/topic merge verlof verlof",
        "/topic verlof",
        "/quit",
    ])  # fmt: skip
    buffer = io.StringIO()
    stack = await start_stack(settings, fake=fake_slack, namespace=f"t{unique}",
                              services=("extractor", "content", "quiz"))  # fmt: skip
    try:
        out_console = Console(file=buffer, width=140, highlight=False)
        await run(settings=settings, input_fn=script, namespace=stack.gateway.namespace,
                  user_id=CONSOLE_USER, out=out_console)  # fmt: skip
        out = buffer.getvalue()
        store = stack.store
        assert "relevantie: core (niet vergrendeld)" in out and "HR-portaal" in out
        assert "Bijgewerkt. (terugdraaien: r42 graph undo undo-" in out
        assert "dat commando klopt niet" in out  # --relevance hoog
        assert "Relatie toegevoegd." in out and "Samengevoegd." in out
        asked = [p for p in script.prompts if "verwijderen?" in p]
        assert len(asked) == 2 and "Teamlead verwijderen? Dit gaat mee: 2 relatie(s)" in asked[0]
        assert "Niet verwijderd." in out and "Verwijderd." in out
        assert "gaat niet op in zichzelf" in out
        assert "relevantie: standard (vergrendeld)" in out and "Vrij nemen, zo." in out
        topic = await store.topics.get("verlof")
        assert topic is not None and topic.relevance_locked
        assert await store.topics.get("declaraties") is None
        assert await eventually(lambda: store.topics.get("teamlead"), lambda t: t is None) is None
        audit = await store.audit.latest()
        # The self-merge is refused by the console before it reaches the owner.
        assert {e.surface for e in audit} == {"console"} and all(e.allowed for e in audit)
        assert [e.action for e in audit] == [
            "topic.delete",
            "topic.merge",
            "topic.relation_add",
            "topic.edit",
        ]
    finally:
        await stop_stack(stack)
