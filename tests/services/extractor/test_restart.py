"""SIGKILL the extractor process mid-source; a restart resumes at the first unmerged chunk."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from services.extractor.local import ingest_locally
from services.extractor.uploads import register_upload
from shared.bus import build_broker, publish_event, start_broker
from shared.kb import chunk_text
from shared.store import Store, export_kb, open_store
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.fixtures import FAKE_ANTHROPIC_API_KEY

from .conftest import OPTIONS, EventLog, chunk_position, markdown_responder

CHUNKS = 10
ROOT = Path(__file__).resolve().parents[3]


def linked_sections(n: int) -> str:
    """Sections that each name the previous one (relations only the known-ids hint allows)."""
    filler = "Dit is een zin met genoeg woorden om de sectie ruim te vullen. " * 4
    parts = [f"## Stap {i}\nDeze stap volgt op stap {i - 1}. {filler.strip()}" for i in range(n)]
    return "\n\n".join(parts) + "\n"


def spawn(env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    with log_path.open("ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "services.extractor"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def graph_without_ids(doc: dict[str, Any]) -> dict[str, Any]:
    """The graph with per-run source ids removed (everything else must be equal)."""
    topics = [
        {**t, "metadata": {k: v for k, v in t["metadata"].items() if k != "source_id"}}
        for t in doc["topics"]
    ]
    return {"topics": topics, "relations": doc["relations"]}


async def test_killed_extractor_resumes_where_it_stopped(
    nats_url: str, unique: str, tmp_path: Path, fake_anthropic: FakeAnthropic, fake_llm: Any
) -> None:
    respond = markdown_responder()
    # Paced replies so the kill lands mid-source.
    fake_anthropic.default = lambda body: replace(respond(body), delay=0.25)
    ns = f"x{unique}"
    url = f"sqlite:///{tmp_path / 'kb.db'}"
    env = {
        **os.environ,
        "NATS_URL": nats_url,
        "R42_STORE": url,
        "R42_LLM": "anthropic",
        "ANTHROPIC_BASE_URL": fake_anthropic.url,
        "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_API_KEY,
        "R42_LIMITER": "off",
        "R42_LOG_LEVEL": "WARNING",
        "R42_EXTRACTOR_BUS_NAMESPACE": ns,
        "R42_EXTRACTOR_ACK_WAIT_S": "1.5",
        "R42_EXTRACTOR_SAMPLE_HANDBOOK": "false",
        "R42_EXTRACTOR_MAX_CHUNK_CHARS": "400",
        "R42_EXTRACTOR_OVERLAP_CHARS": "0",
    }
    text = linked_sections(CHUNKS)
    assert len(chunk_text(text, max_chars=400, overlap_chars=0)) == CHUNKS
    store = await open_store(url)
    broker = build_broker(nats_url, name="restart-test")
    events = await EventLog(ns).start(nats_url)
    children: list[subprocess.Popen[bytes]] = []
    try:
        await start_broker(broker, namespace=ns)
        reg = await register_upload(
            store, name="stappen.md", text=text, uploaded_by="U1", actor="test"
        )
        assert reg.source is not None and reg.event is not None
        source_id = reg.source.id
        await publish_event(broker, reg.event, namespace=ns)
        children.append(spawn(env, tmp_path / "extractor.log"))
        await events.wait_for(
            lambda: any(e.chunks_done >= 3 for e in events.of("source.progress")), 60
        )
        children[0].send_signal(signal.SIGKILL)
        await asyncio.to_thread(children[0].wait, 10)
        merged_at_kill = await store.sources.merged_chunks(source_id)
        assert 3 <= len(merged_at_kill) < CHUNKS, "the kill must land mid-source"

        children.append(spawn(env, tmp_path / "extractor.log"))
        await events.wait_for(lambda: events.of("source.completed", source_id), 60)
        asked = [chunk_position(r.body)[0] for r in fake_anthropic.requests]
        interrupted = graph_without_ids(await export_kb(store))
    finally:
        for child in children:
            if child.poll() is None:
                child.terminate()
                await asyncio.to_thread(child.wait, 10)
        await events.close()
        await broker.stop()
        await store.close()
    log_text = (tmp_path / "extractor.log").read_text(errors="replace")
    for index in merged_at_kill:
        assert asked.count(index) == 1, (index, asked, log_text[-2000:])
    assert set(asked) == set(range(CHUNKS))
    assert len(events.of("source.completed", source_id)) == 1

    # The same document through one uninterrupted run gives the same graph.
    clean: Store = await open_store(f"sqlite:///{tmp_path / 'clean.db'}")
    try:
        again = await register_upload(
            clean, name="stappen.md", text=text, uploaded_by="U1", actor="test"
        )
        assert again.source is not None
        await ingest_locally(
            store=clean, source_ids=[again.source.id], limiter=None, options=OPTIONS
        )
        uninterrupted = graph_without_ids(await export_kb(clean))
    finally:
        await clean.close()
    assert interrupted == uninterrupted
    assert any(r["type"] == "related_to" for r in interrupted["relations"])
