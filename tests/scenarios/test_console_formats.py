"""Console `/ingest` of PDF, DOCX and HTML over the real extractor; a scan and RTF refused."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from services.gateway.console import run
from tests.fakes.slack_server import FakeSlack
from tests.scenarios.stack import stack_settings, start_stack, stop_stack
from tests.scenarios.test_console import CONSOLE_USER, Script
from tests.shared.formats.documents import RAW_SYNTAX, all_cases, readable_cases, refused_cases

pytestmark = pytest.mark.timeout(120)


async def test_console_ingest_reads_every_format(
    nats_url: str, tmp_path: Path, fake_slack: FakeSlack, unique: str
) -> None:
    # One console session for every case: the stack starts once.
    settings = stack_settings(nats_url=nats_url, tmp_path=tmp_path, fake=fake_slack)
    for case in all_cases():
        (tmp_path / case.name).write_bytes(case.data)
    script = Script([*(f"/ingest {tmp_path / c.name}" for c in all_cases()), "/quit"])
    buffer = io.StringIO()
    stack = await start_stack(settings, fake=fake_slack, namespace=f"c{unique}",
                              services=("extractor",))  # fmt: skip
    try:
        out_console = Console(file=buffer, width=400, highlight=False)
        await run(settings=settings, input_fn=script, namespace=stack.gateway.namespace,
                  user_id=CONSOLE_USER, out=out_console)  # fmt: skip
        out = " ".join(buffer.getvalue().split())
        sources = {s.name: s for s in await stack.store.sources.list(limit=20)}
        assert set(sources) == {c.name for c in readable_cases()}, out
        topics = await stack.store.topics.list()
        for case in readable_cases():
            assert f"{case.name}: klaar" in out
            source = sources[case.name]
            assert source.status == "completed"
            text = await stack.store.source_texts.get(source.id)
            assert text is not None and case.text in text
            assert not any(raw in text for raw in RAW_SYNTAX)
        described = " ".join(f"{t.label} {t.description}" for t in topics)
        assert all(case.text in described for case in readable_cases())
        assert not any(raw in described for raw in RAW_SYNTAX)
        assert {"verlof", "reiskosten"} <= {t.id for t in topics}  # DOCX and HTML headings
        for case in refused_cases():
            assert case.error_nl in out, out
    finally:
        await stop_stack(stack)
