"""Any NATS client can upload: raw nats-py, an `r42 creds` uploader, docs/asyncapi.yaml only."""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import uuid
from datetime import UTC, datetime
from pathlib import Path

import nats

from shared.store import open_store
from tests.services.cli.test_up import R42, start_up  # noqa: F401 - the fixture

DOC = "# Verlof\n\n## Ouderschapsverlof\nOuders krijgen verlof na de geboorte van hun kind.\n"
# Everything below is what docs/asyncapi.yaml tells a client, nothing of the project's code.
BUCKET = "r42-sources"


async def test_a_raw_nats_client_with_an_uploader_credential_gets_its_source_ingested(
    tmp_path: Path,
    start_up,  # noqa: F811
) -> None:
    data = tmp_path / "data"
    env = {"R42_LLM": "offline", "R42_EXTRACTOR_SAMPLE_HANDBOOK": "false"}
    up = start_up(data, "-s", "extractor", env=env)
    state = await asyncio.to_thread(up.wait_ready, data, {"extractor"})
    done = await asyncio.to_thread(
        subprocess.run, [*R42, "creds", "wiki", "--role", "uploader", "--data-dir", str(data)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seed = done.stdout.splitlines()[-1]
    body = DOC.encode()
    source_id = f"wiki-{uuid.uuid4().hex[:12]}"
    nc = await nats.connect(state.nats_url, nkeys_seed=seed, inbox_prefix="_INBOX_wiki")
    try:
        outcomes: asyncio.Queue = asyncio.Queue()
        for subject in ("source.completed", "source.failed"):
            await nc.subscribe(subject, cb=outcomes.put)
        js = nc.jetstream()
        bucket = await js.object_store(BUCKET)
        await bucket.put("handboek/verlof.md", body)
        event_id = str(uuid.uuid4())
        event = {
            "event_id": event_id, "occurred_at": datetime.now(UTC).isoformat(),
            "schema_version": 1, "actor": "wiki", "source_id": source_id,
            "name": "handboek/verlof.md", "sha256": hashlib.sha256(body).hexdigest(),
            "text_ref": "handboek/verlof.md", "size": len(body), "uploaded_by": "wiki",
        }  # fmt: skip
        await js.publish("source.uploaded", json.dumps(event).encode(),
                         headers={"Nats-Msg-Id": event_id})  # fmt: skip
        while True:
            msg = await asyncio.wait_for(outcomes.get(), 60)
            outcome = json.loads(msg.data)
            if outcome["source_id"] == source_id:
                break
    finally:
        await nc.close()
    assert msg.subject == "source.completed", outcome
    assert outcome["chunks_done"] == outcome["chunks_total"] >= 1
    store = await open_store(f"sqlite:///{data / 'r42.db'}")
    try:
        source = await store.sources.get(source_id)
        ids = await store.topics.ids()
    finally:
        await store.close()
    assert source is not None and source.name == "handboek/verlof.md"
    assert source.status == "completed"
    assert "ouderschapsverlof" in ids
