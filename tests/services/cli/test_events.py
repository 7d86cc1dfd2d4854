"""`r42 events tail`: line formatting (pure) and the live subscription against a real server."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import nats
import pytest
from nats.js.api import StreamConfig

from services.cli.event_format import (
    check_filter,
    is_consumer_delivery,
    is_internal,
    is_secret_key,
    key_fields,
    mask_secrets,
    parse_message,
    render_json,
    render_line,
)
from shared.bus import LLMCallLogged, SourceFailed, SourceProgress
from shared.errors import BadInputError
from shared.llm.telemetry import LLMCallRecord
from shared.runtime import EmbeddedNatsServer, RuntimeState, write_state

R42 = [sys.executable, "-c", "from services.cli.main import main; main()"]
NOW = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)


def _view(event: object, subject: str | None = None, headers: dict[str, str] | None = None):
    data = event.to_bytes() if hasattr(event, "to_bytes") else json.dumps(event).encode()
    return parse_message(subject or event.subject, data, headers=headers, received_at=NOW)  # type: ignore[attr-defined]


# -- formatting ---------------------------------------------------------------------------


def test_progress_line_shows_ids_and_counts() -> None:
    event = SourceProgress(
        actor="extractor", source_id="src-1", chunks_done=3, chunks_total=10, topics_added=4
    )
    view = _view(event)
    fields = dict(view.fields)
    assert fields["source_id"] == "src-1"
    assert fields["chunks_done"] == "3" and fields["chunks_total"] == "10"
    assert fields["topics_added"] == "4" and fields["by"] == "extractor"
    assert "occurred_at" not in fields and "schema_version" not in fields
    assert view.event_id == event.event_id and view.time == event.occurred_at
    assert view.level == "progress"
    line = render_line(view, tz=UTC).plain
    # The event's own time (occurred_at), not when the tail received it.
    assert line.startswith(event.occurred_at.strftime("%H:%M:%S.%f")[:-3] + "  source.progress")
    assert "source.progress" in line and event.event_id[:8] in line
    assert "source_id=src-1" in line and "chunks_done=3" in line


def test_failure_line_is_an_error_with_the_message_last() -> None:
    view = _view(SourceFailed(actor="extractor", source_id="s9", error="PDF has no text"))
    assert view.level == "error"
    assert view.fields[-1] == ("error", "PDF has no text")
    text = render_line(view)
    assert any("red" in str(span.style) for span in text.spans)


def test_llm_call_line_shows_task_model_tokens_cost() -> None:
    record = LLMCallRecord(
        task="extract", model="claude-haiku-4-5", tier="fast", duration_ms=812.4,
        input_tokens=1200, output_tokens=300, cache_read_input_tokens=1000, ok=True,
        cost_usd=0.0031,
    )  # fmt: skip
    view = _view(LLMCallLogged(actor="extractor", record=record))
    assert view.level == "llm"
    assert view.fields == (
        ("task", "extract"), ("model", "claude-haiku-4-5"), ("tier", "fast"),
        ("tokens", "1200/300 cache w0/r1000"), ("cost", "$0.0031"), ("ms", "812"), ("ok", "True"),
    )  # fmt: skip
    failed = record.model_copy(update={"ok": False, "error_msg": "rate limited (429)"})
    view = _view(LLMCallLogged(actor="r42", record=failed))
    assert view.level == "error" and view.fields[-1] == ("error", "rate limited (429)")


def test_secrets_are_masked_in_lines_and_json() -> None:
    payload = {
        "event_id": "e1", "source_id": "s1", "api_key": "sk-ant-api03-abcdef",
        "token": "xoxb-123-456", "nested": {"botToken": "xoxb-9", "password": "hunter2"},
        "note": "called with Bearer abc.def.ghi", "input_tokens": 5,
    }  # fmt: skip
    view = _view(payload, "custom.event", headers={"Authorization": "Bearer zzz", "x": "1"})
    dump = render_json(view) + render_line(view).plain
    for secret in ("sk-ant-api03", "xoxb-", "hunter2", "abc.def.ghi", "zzz"):
        assert secret not in dump
    doc = json.loads(render_json(view))
    assert doc["payload"]["api_key"] == "***" and doc["payload"]["token"] == "***"
    assert doc["payload"]["nested"] == {"botToken": "***", "password": "***"}
    assert doc["payload"]["input_tokens"] == 5 and doc["headers"]["x"] == "1"
    assert doc["subject"] == "custom.event" and doc["event_id"] == "e1"


def test_secret_key_detection() -> None:
    for key in ("api_key", "apiKey", "token", "bot_token", "SLACK_SIGNING_SECRET", "password"):
        assert is_secret_key(key), key
    for key in ("input_tokens", "output_tokens", "author", "keywords", "source_id", "monkey"):
        assert not is_secret_key(key), key
    assert mask_secrets(["ghp_" + "a" * 36, 3]) == ["***", 3]


def test_non_json_and_non_object_payloads() -> None:
    view = parse_message("raw.bytes", b"\xff\x00hello", headers=None, received_at=NOW)
    assert view.payload is None and view.raw is not None and view.level == "info"
    assert dict(view.fields) == {"bytes": "7", "payload": "not JSON"}
    assert json.loads(render_json(view))["raw"].endswith("hello")
    view = parse_message("a.list", b"[1, 2]", headers={"Nats-Msg-Id": "m1"}, received_at=NOW)
    assert view.event_id == "m1" and dict(view.fields)["payload"] == "list"
    assert view.time == NOW


def test_long_values_are_truncated_and_text_skipped() -> None:
    fields = dict(key_fields({"topic_id": "t" * 100, "description": "long text", "status": "ok"}))
    assert len(fields["topic_id"]) == 40 and fields["topic_id"].endswith("…")
    assert "description" not in fields and fields["status"] == "ok"


def test_internal_subjects_and_filters() -> None:
    for subject in ("_INBOX.abc", "$JS.API.INFO", "$KV.b.k", "$SYS.x", "_R_.x"):
        assert is_internal(subject)
    assert not is_internal("source.uploaded") and not is_internal("rpc.r42.chat")
    assert is_consumer_delivery("$JS.ACK.LLM.telemetry.1.2.3.4.0")
    assert not is_consumer_delivery("_INBOX.abc") and not is_consumer_delivery(None)
    for good in (">", "source.>", "*.x.*", "llm.call.logged"):
        assert check_filter(good) == good
    for bad in ("", "a..b", "a.>.b", "a b", "so*rce.x"):
        with pytest.raises(BadInputError):
            check_filter(bad)


# -- the command against a real server -----------------------------------------------------


async def _start_tail(*args: str, env: dict[str, str]) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(
        *R42, "events", "tail", *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, **env},
    )  # fmt: skip
    assert proc.stderr is not None
    line = await asyncio.wait_for(proc.stderr.readline(), 60)
    assert b"listening on" in line, line + await proc.stderr.read()
    return proc


@pytest.fixture
def private_nats(tmp_path: Path) -> Iterator[str]:
    """A server of its own, so a `>` tail sees only this test's traffic."""
    with EmbeddedNatsServer(tmp_path / "nats") as server:
        yield server.url


async def test_tail_json_prints_new_events_only(private_nats: str) -> None:
    proc = await _start_tail("--json", "--count", "2", env={"NATS_URL": private_nats})
    nc = await nats.connect(private_nats)
    js = nc.jetstream()
    try:
        await js.add_stream(StreamConfig(name="TAIL", subjects=["evt.>"]))
        # Internal traffic (inboxes, KV, the JetStream API above) must be skipped.
        for internal in ("_INBOX.x.y", "$KV.bucket.k", "$SYS.x"):
            await nc.publish(internal, b"{}")
        one = {"event_id": "id-1", "source_id": "s1", "api_key": "sk-ant-xyz"}
        await js.publish("evt.one", json.dumps(one).encode())
        # A consumer reading the stored event: the tail sees that delivery and must skip it.
        consumer = await js.pull_subscribe("evt.>", durable="reader")
        [delivered] = await consumer.fetch(1, timeout=10)
        await delivered.ack()
        await nc.publish("evt.two", b'{"event_id": "id-2", "count": 2}')
        await nc.flush()
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        await nc.close()
    assert proc.returncode == 0, err
    docs = [json.loads(line) for line in out.decode().splitlines()]
    assert [d["subject"] for d in docs] == ["evt.one", "evt.two"]
    assert docs[0]["payload"] == {**one, "api_key": "***"}
    assert docs[1]["payload"] == {"event_id": "id-2", "count": 2}
    assert b"sk-ant-xyz" not in out + err


async def test_tail_filter_limits_what_is_shown(nats_url: str, unique: str) -> None:
    proc = await _start_tail(
        "--json", "--count", "1", f"want.{unique}.*", env={"NATS_URL": nats_url}
    )
    nc = await nats.connect(nats_url)
    try:
        await nc.publish(f"other.{unique}.x", b"{}")
        await nc.publish(f"want.{unique}.deep.x", b"{}")
        await nc.publish(f"want.{unique}.x", b'{"n": 1}')
        await nc.flush()
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        await nc.close()
    assert [json.loads(line)["subject"] for line in out.decode().splitlines()] == [
        f"want.{unique}.x"
    ]


async def test_tail_finds_r42_up_through_the_state_file_and_exits_on_sigint(
    nats_url: str, unique: str, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    write_state(data, RuntimeState(pid=os.getpid(), data_dir=str(data), nats_url=nats_url))
    proc = await _start_tail(f"t.{unique}.>", "--data-dir", str(data), env={})
    nc = await nats.connect(nats_url)
    try:
        await nc.publish(f"t.{unique}.done", b'{"event_id": "abcdef123456", "status": "ok"}')
        await nc.flush()
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
    finally:
        await nc.close()
    assert f"t.{unique}.done" in line and "abcdef12" in line and "status=ok" in line
    assert "\x1b[" not in line  # no colour codes when stdout is not a terminal
    proc.send_signal(signal.SIGINT)
    await asyncio.wait_for(proc.wait(), 60)
    assert proc.returncode == 0


def test_tail_without_a_running_r42_is_a_clear_error(tmp_path: Path) -> None:
    data = tmp_path / "data"
    run = subprocess.run(
        [*R42, "events", "tail", "--data-dir", str(data)], capture_output=True, timeout=60
    )
    assert run.returncode == 1 and b"no `r42 up` runs on" in run.stderr
    data.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    write_state(data, RuntimeState(pid=dead.pid, data_dir=str(data), nats_url="nats://x:1"))
    run = subprocess.run(
        [*R42, "events", "tail", "--data-dir", str(data)], capture_output=True, timeout=60
    )
    assert run.returncode == 1 and b"stale" in run.stderr


def test_tail_timeout_ends_quietly(nats_url: str, unique: str) -> None:
    run = subprocess.run(
        [*R42, "events", "tail", f"quiet.{unique}.>", "--timeout", "0.5"],
        capture_output=True, timeout=60, env={**os.environ, "NATS_URL": nats_url},
    )  # fmt: skip
    assert run.returncode == 0 and run.stdout == b""
