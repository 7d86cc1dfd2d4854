"""Console `/sources delete` over the real KG owner: the preview asked as j/n, the bound and
how to raise it, bad input; the console user is an admin in the embedded runtime."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from services.gateway.console import run
from shared.store import open_store
from tests.fakes.slack_server import FakeSlack
from tests.scenarios.stack import stack_settings, start_stack, stop_stack
from tests.scenarios.test_console import CONSOLE_USER, Script
from tests.services.extractor.test_source_delete_rpc import seed_sources

pytestmark = pytest.mark.timeout(120)


async def test_sources_delete_in_the_console(
    nats_url: str, tmp_path: Path, fake_slack: FakeSlack, unique: str
) -> None:
    settings = stack_settings(nats_url=nats_url, tmp_path=tmp_path, fake=fake_slack)
    store = await open_store(settings.store_url)
    try:
        await seed_sources(store)
    finally:
        await store.close()
    script = Script([
        "/sources delete src-a", "n",
        "/sources delete src-a", "j",
        "/sources delete src-c",
        "/sources delete src-c --max-deletions 6", "j",
        '/sources delete "src a!"',
        "/sources delete",
        "/sources",
        "/quit",
    ])  # fmt: skip
    buffer = io.StringIO()
    stack = await start_stack(settings, fake=fake_slack, namespace=f"c{unique}",
                              services=("extractor",))  # fmt: skip
    try:
        out_console = Console(file=buffer, width=400, highlight=False)
        await run(settings=settings, input_fn=script, namespace=stack.gateway.namespace,
                  user_id=CONSOLE_USER, out=out_console)  # fmt: skip
        out = " ".join(buffer.getvalue().split())
        asked = [p for p in script.prompts if "verwijderen?" in p]
        assert len(asked) == 3 and "Bron verlof.md verwijderen?" in asked[0]
        assert "2 onderwerp(en) die alleen deze bron noemt (declaraties, verlof)" in asked[0]
        assert "Niet verwijderd." in out and "Bron verlof.md is verwijderd" in out
        assert "In de console: /undo undo-" in out
        assert "haalt 6 van de 8 onderwerpen weg; de grens is 5" in out
        assert "/sources delete src-c --max-deletions 6" in out
        assert "Bron los.md is verwijderd: 6 onderwerp(en)" in out
        assert "`src a!` is geen geldig bron-id" in out
        assert "noem de bron: /sources delete ID [--max-deletions N]" in out
        assert "portaal.md" in out  # the list: only src-b is left
        assert await stack.store.topics.ids() == {"hr-portaal", "teamlead"}
        audit = await stack.store.audit.latest()
        assert [(e.surface, (e.after or {}).get("outcome")) for e in reversed(audit)] == [
            ("console", "done"), ("console", "done")]  # fmt: skip
    finally:
        await stop_stack(stack)
