"""A killed `r42 ingest` (no stack) is resumed by the next run: same source id, no chunk twice."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from shared.store import open_store
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.fixtures import FAKE_ANTHROPIC_API_KEY
from tests.services.extractor.conftest import chunk_position, markdown_responder, sections

R42 = [sys.executable, "-c", "from services.cli.main import main; main()"]
CHUNKS = 6


async def test_a_killed_ingest_is_resumed_under_the_same_source_id(
    tmp_path: Path, fake_anthropic: FakeAnthropic
) -> None:
    respond = markdown_responder()
    fake_anthropic.default = lambda body: replace(respond(body), delay=0.4)
    data = tmp_path / "data"
    doc = tmp_path / "stappen.md"
    doc.write_text(sections(CHUNKS))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATS_", "R42_"))}
    env.update({
        "R42_DATA_DIR": str(data), "R42_LLM": "anthropic", "R42_LIMITER": "off",
        "ANTHROPIC_BASE_URL": fake_anthropic.url, "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_API_KEY,
        "R42_EXTRACTOR_MAX_CHUNK_CHARS": "400", "R42_EXTRACTOR_OVERLAP_CHARS": "0",
    })  # fmt: skip
    first = await asyncio.to_thread(
        subprocess.Popen, [*R42, "ingest", str(doc)], env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"sqlite:///{data / 'r42.db'}"
    try:
        for _ in range(600):
            await asyncio.sleep(0.1)
            if (data / "r42.db").exists():
                store = await open_store(url)
                try:
                    sources = await store.sources.list()
                    merged = await store.sources.merged_chunks(sources[0].id) if sources else set()
                finally:
                    await store.close()
                if len(merged) >= 2:
                    break
        first.send_signal(signal.SIGKILL)
        await asyncio.to_thread(first.wait, 10)
    finally:
        if first.poll() is None:
            first.kill()
    assert 2 <= len(merged) < CHUNKS, "the kill must land mid-source"
    [killed] = sources
    done = await asyncio.to_thread(
        subprocess.run, [*R42, "ingest", str(doc)], env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"resuming stappen.md as source {killed.id}" in done.stdout
    store = await open_store(url)
    try:
        [after] = await store.sources.list()
        ids = await store.topics.ids()
    finally:
        await store.close()
    assert after.id == killed.id and after.status == "completed"
    assert ids == {f"onderwerp-{i}" for i in range(CHUNKS)}
    asked = [chunk_position(r.body)[0] for r in fake_anthropic.requests]
    for index in merged:
        assert asked.count(index) == 1, (index, asked)  # a merged chunk is never asked again
    assert set(asked) == set(range(CHUNKS))
