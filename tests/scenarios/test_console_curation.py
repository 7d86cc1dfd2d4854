"""Console curation over the real extractor (offline LLM): /analyze, /undo, /curriculum."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console

from services.gateway.console import run
from services.gateway.core.curriculum import this_week, week_after
from shared.store import Topic
from tests.fakes.slack_server import FakeSlack
from tests.scenarios.stack import RELATIONS, TOPICS, seed, stack_settings, start_stack, stop_stack
from tests.scenarios.test_console import CONSOLE_USER, Script

pytestmark = pytest.mark.timeout(120)


async def test_console_analyze_apply_undo_and_curriculum(
    nats_url: str, tmp_path: Path, fake_slack: FakeSlack, unique: str
) -> None:
    settings = stack_settings(nats_url=nats_url, tmp_path=tmp_path, fake=fake_slack)
    duplicate = Topic(id="team-lead", label="Team lead", type="role")
    await seed(settings, [*TOPICS, duplicate], RELATIONS)
    stack = await start_stack(
        settings, fake=fake_slack, namespace=f"k{unique}", services=("extractor",)
    )
    first = io.StringIO()
    try:
        await run(settings=settings, input_fn=Script(["/analyze", "m0", "/quit"]),
                  namespace=stack.gateway.namespace, user_id=CONSOLE_USER,
                  out=Console(file=first, width=140, highlight=False))  # fmt: skip
        out = first.getvalue()
        assert "Toegepast: 1 samengevoegd" in out, out
        # The plan's action kinds are Dutch words, never the English identifiers.
        assert "samenvoegen" in out and not re.search(r"\b(merge|delete|relevance)\b", out), out
        store = stack.store
        assert len({"team-lead", "teamlead"} & await store.topics.ids()) == 1
        undo_id = re.search(r"/undo (undo-[0-9a-f]+)", out).group(1)

        second = io.StringIO()
        script = Script([f"/undo {undo_id}", "/curriculum HR-portaal; verlof", "/quit"])
        console = Console(file=second, width=140, highlight=False)
        await run(settings=settings, input_fn=script, namespace=stack.gateway.namespace,
                  user_id=CONSOLE_USER, out=console)  # fmt: skip
        out = second.getvalue()
        assert "Ongedaan gemaakt" in out, out
        assert {"team-lead", "teamlead"} <= await store.topics.ids()
        assert await store.curriculum.get(this_week()) == "hr-portaal"
        assert await store.curriculum.get(week_after(this_week(), 1)) == "verlof"
        assert f"{this_week()}  HR-portaal" in out
        actions = [(e.action, e.surface) for e in reversed(await store.audit.latest())]
        assert actions == [
            ("graph.analyze", "console"), ("graph.apply", "console"),
            ("graph.undo", "console"), ("curriculum.set", "console"),
        ]  # fmt: skip
    finally:
        await stop_stack(stack)
