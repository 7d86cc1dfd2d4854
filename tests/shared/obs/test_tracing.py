"""One trace spans a chat turn across three processes: caller → r42 (LLM call) → telemetry."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from shared.bus import CHAT_SUBJECT, ChatReply, ChatRequest, build_broker, request
from shared.obs.tracing import setup_tracing, shutdown_tracing, tracing_enabled
from shared.runtime import EmbeddedNatsServer
from shared.store import KbChanges, open_store
from tests.scenarios.stack import RELATIONS, TOPICS
from tests.shared.obs.conftest import ServiceProcess, service_env, wait_ready


def _spans(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def test_one_trace_across_caller_r42_and_telemetry(
    own_nats: EmbeddedNatsServer, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    store = await open_store(f"sqlite:///{data / 'r42.db'}")
    try:
        await store.apply_kb_changes(KbChanges(topics_upsert=TOPICS, relations_upsert=RELATIONS))
    finally:
        await store.close()
    files = {name: tmp_path / f"{name}.spans.jsonl" for name in ("caller", "r42", "telemetry")}
    procs = [
        ServiceProcess(name, service_env(nats_url=own_nats.url, data_dir=data,
                                         R42_TRACES_FILE=str(files[name])),
                       tmp_path / f"{name}.log")
        for name in ("telemetry", "r42")
    ]  # fmt: skip
    setup_tracing("caller", otlp_endpoint=None, spans_file=files["caller"])
    broker = build_broker(own_nats.url, name="obs-trace-test")
    try:
        for proc in procs:
            await asyncio.to_thread(wait_ready, data, proc.name, proc)
        await broker.start()
        ask = ChatRequest(user_id="U1", text="Hoe vraag ik verlof aan?")
        reply = await request(broker, CHAT_SUBJECT, ask, response_model=ChatReply, timeout=30)
        assert reply.offline and reply.sources
        deadline = time.monotonic() + 20
        consumed: list[dict] = []
        while time.monotonic() < deadline and not consumed:
            consumed = [s for s in _spans(files["telemetry"])
                        if s["kind"] == "CONSUMER" and "llm.call.logged" in s["name"]]  # fmt: skip
            await asyncio.sleep(0.1)
    finally:
        await broker.stop()
        shutdown_tracing()
        for proc in procs:
            proc.stop()
    assert not tracing_enabled()

    caller = [s for s in _spans(files["caller"]) if s["name"] == f"{CHAT_SUBJECT} request"]
    assert len(caller) == 1 and caller[0]["kind"] == "CLIENT"
    trace_id = caller[0]["trace_id"]
    r42 = [s for s in _spans(files["r42"]) if s["trace_id"] == trace_id]
    server = [s for s in r42 if s["name"] == CHAT_SUBJECT and s["kind"] == "SERVER"]
    assert len(server) == 1 and server[0]["parent_id"] == caller[0]["span_id"]
    assert server[0]["service"] == "r42-r42"
    llm = [s for s in r42 if s["name"].startswith("llm ")]
    assert llm, f"no LLM span in the chat trace: {[s['name'] for s in r42]}"
    ids = {s["span_id"]: s for s in r42}
    for span in llm:  # each LLM span hangs under the server span
        parent = span
        while parent["parent_id"] in ids:
            parent = ids[parent["parent_id"]]
        assert parent is server[0]
        attrs = span["attributes"]
        assert attrs["gen_ai.system"] == "offline" and attrs["gen_ai.request.model"]
        for key in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                    "cache_creation_input_tokens"):  # fmt: skip
            assert isinstance(attrs[f"gen_ai.usage.{key}"], int)
        assert span["start_ns"] >= server[0]["start_ns"] and span["end_ns"] <= server[0]["end_ns"]
    ours = [s for s in consumed if s["trace_id"] == trace_id]
    assert ours, "telemetry consumed llm.call.logged outside the chat's trace"
    assert {s["service"] for s in ours} == {"r42-telemetry"}
    publish = {s["span_id"] for s in r42 if s["kind"] == "PRODUCER"}
    assert all(s["parent_id"] in publish for s in ours)
