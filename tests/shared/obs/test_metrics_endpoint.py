"""A running service process serves /metrics, /healthz and /readyz and writes its status file."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from shared.bus import LLMCallLogged, build_broker, publish_event
from shared.llm.telemetry import LLMCallRecord
from shared.runtime import EmbeddedNatsServer
from tests.shared.obs.conftest import ServiceProcess, service_env, wait_ready


def _get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.headers["Content-Type"], resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read().decode()


def _samples(text: str) -> dict[str, list]:
    found: dict[str, list] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append(sample)
    return found


@pytest.fixture
def telemetry(own_nats: EmbeddedNatsServer, tmp_path: Path):
    data = tmp_path / "data"
    proc = ServiceProcess("telemetry", service_env(nats_url=own_nats.url, data_dir=data),
                          tmp_path / "telemetry.log")  # fmt: skip
    try:
        yield data, proc, wait_ready(data, "telemetry", proc)
    finally:
        proc.stop()


async def test_scrape_a_running_service(telemetry, own_nats: EmbeddedNatsServer) -> None:
    _data, proc, status = telemetry
    assert status["pid"] == proc.proc.pid
    assert status["metrics_url"].startswith("http://127.0.0.1:")
    assert status["checks"] == {"nats": "ok", "store": "ok", "consumers": "ok"}

    broker = build_broker(own_nats.url, name="obs-test")
    await broker.start()
    try:
        record = LLMCallRecord(
            task="chat",
            model="claude-sonnet-4-6",
            tier="standard",
            duration_ms=12.0,
            input_tokens=100,
            output_tokens=20,
            ok=True,
        )
        await publish_event(broker, LLMCallLogged(actor="test", record=record))
    finally:
        await broker.stop()

    subject = "llm.call.logged"
    for _ in range(100):  # the consumer acks asynchronously
        code, ctype, body = _get(status["metrics_url"])
        samples = _samples(body)
        processed = [
            s
            for s in samples.get("faststream_received_processed_messages_total", [])
            if s.labels.get("handler") == subject and s.labels["status"] == "acked"
        ]
        if processed:
            break
    assert code == 200 and ctype.startswith("text/plain")
    assert processed and processed[0].value == 1
    assert processed[0].labels["app_name"] == "r42-telemetry"
    durations = samples["faststream_received_processed_messages_duration_seconds_count"]
    assert any(s.labels["handler"] == subject and s.value == 1 for s in durations)
    lag = {s.labels["consumer"]: s.value for s in samples["r42_consumer_pending_messages"]}
    assert lag == {"telemetry": 0}
    assert samples["r42_service_ready"][0].value == 1
    assert samples["r42_service_info"][0].labels["service"] == "telemetry"

    code, _, body = _get(status["healthz_url"])
    assert code == 200 and json.loads(body)["status"] == "ok"
    code, _, body = _get(status["readyz_url"])
    assert code == 200 and json.loads(body)["ready"] is True


async def test_status_file_goes_away_on_stop(telemetry) -> None:
    data, proc, _ = telemetry
    assert proc.stop() == 0
    assert not (data / "run" / "telemetry.json").exists()


def test_a_taken_port_ends_with_one_clear_line(own_nats: EmbeddedNatsServer, tmp_path: Path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = service_env(nats_url=own_nats.url, data_dir=tmp_path / "d",
                          R42_METRICS_PORT=str(port))  # fmt: skip
        proc = ServiceProcess("telemetry", env, tmp_path / "t.log")
        proc.proc.wait(60)
        out = proc.output()
        proc.stop()
    assert proc.proc.returncode == 2
    assert f"telemetry: cannot serve metrics on 127.0.0.1:{port}" in out
    assert "Traceback" not in out


def test_bad_metrics_port_is_rejected(own_nats: EmbeddedNatsServer, tmp_path: Path) -> None:
    env = service_env(nats_url=own_nats.url, data_dir=tmp_path / "d", R42_METRICS_PORT="70000")
    proc = ServiceProcess("telemetry", env, tmp_path / "t.log")
    proc.proc.wait(60)
    out = proc.output()
    proc.stop()
    assert proc.proc.returncode == 2
    assert "invalid observability settings: metrics_port:" in out
    assert "Traceback" not in out
