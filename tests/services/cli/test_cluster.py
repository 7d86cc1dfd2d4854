"""`r42 up --cluster 3`: streams at R3, a NATS node SIGKILLed mid-run, and an ingest still lands."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from shared.bus import NatsAuth
from shared.runtime import read_state
from shared.runtime.session import connect_nats
from shared.store import open_store
from tests.services.cli.test_up import R42
from tests.services.cli.test_up import start_up as start_up  # the fixture
from tests.shared.runtime.kids import gone, wait_until

SECTIONS = ("Onboarding", "Expenses", "Security", "Holidays")


def _doc(path: Path) -> Path:
    body = "".join(
        f"## {title}\n\n" + f"{title} policy: every employee follows the {title} process. " * 6
        + "\n\n"
        for title in SECTIONS
    )  # fmt: skip
    path.write_text(f"# Handbook\n\n{body}")
    return path


def _status(data: Path) -> dict:
    done = subprocess.run(
        [*R42, "status", "--json", "--data-dir", str(data)], capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.timeout(240)
async def test_cluster_survives_a_killed_node_and_an_ingest_completes(
    tmp_path: Path, start_up
) -> None:
    data = tmp_path / "data"
    env = {
        "R42_EXTRACTOR_SAMPLE_HANDBOOK": "false",
        "R42_EXTRACTOR_MAX_CHUNK_CHARS": "400",
        "R42_EXTRACTOR_OVERLAP_CHARS": "40",
    }
    up = start_up(data, "--cluster", "3", "--replicas", "2", "-s", "extractor", env=env)
    state = await asyncio.to_thread(up.wait_ready, data, {"extractor.1", "extractor.2"})
    assert len(state.nats_nodes) == 3 and state.stream_replicas == 3
    assert state.nats_url == ",".join(n.url for n in state.nats_nodes)

    # Every stream and bucket is replicated on all three nodes.
    runtime = NatsAuth(data / "nats" / "users" / "runtime.nk", "_INBOX_runtime")
    nc = await connect_nats(state.nats_url, auth=runtime)
    try:
        infos = {i.config.name: i for i in await nc.jetstream().streams_info()}
    finally:
        await nc.close()
    assert {"SOURCES", "CHUNKS", "KB", "KV_r42_limits", "OBJ_r42-sources"} <= set(infos)
    assert all(i.config.num_replicas == 3 for i in infos.values())
    leader = infos["SOURCES"].cluster.leader if infos["SOURCES"].cluster else None
    victim = next(n for n in state.nats_nodes if n.name == f"nats-{str(leader)[-1]}")

    doc = await asyncio.to_thread(_status, data)
    assert [n["pid"] for n in doc["nats"]] == [n.pid for n in state.nats_nodes]
    assert {s["instance"] for s in doc["services"]} == {"extractor.1", "extractor.2"}
    assert all(s["ready"] and s["name"] == "extractor" for s in doc["services"])

    # SIGKILL the node leading the SOURCES stream, then ingest while it is down or restarting.
    assert victim.pid
    os.kill(victim.pid, signal.SIGKILL)
    ingest = await asyncio.create_subprocess_exec(
        *R42, "ingest", str(_doc(tmp_path / "handbook.md")), "--wait", "--timeout", "120",
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        env={**os.environ, "R42_DATA_DIR": str(data)},
    )  # fmt: skip
    out, _ = await asyncio.wait_for(ingest.communicate(), 150)
    assert ingest.returncode == 0, out.decode()

    def restarted() -> bool:
        now = read_state(data)
        node = next(n for n in now.nats_nodes if n.name == victim.name) if now else None
        return node is not None and node.pid not in (None, victim.pid)

    await asyncio.to_thread(wait_until, restarted, timeout=60, what="the killed node back")
    after = read_state(data)
    assert after is not None and gone(victim.pid)
    node = next(n for n in after.nats_nodes if n.name == victim.name)
    assert node.url == victim.url and node.store == victim.store  # same port, same store
    assert _status(data)["nats_restarts"] == 1

    store = await open_store(f"sqlite:///{data / 'r42.db'}")
    try:
        sources = await store.sources.list()
        assert [s.status for s in sources] == ["completed"]
        topics = await store.topics.list()
    finally:
        await store.close()
    assert len(topics) >= len(SECTIONS)

    up.proc.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(up.proc.wait, 60) == 0, up.output()
    assert all(gone(n.pid) for n in after.nats_nodes if n.pid)
