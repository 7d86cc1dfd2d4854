"""Recovery of `r42 up`: nats-server killed, `r42 up` killed or restarted, crash loops, status."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from pathlib import Path

import nats
import psutil
import pytest

from shared.bus import NatsAuth
from shared.runtime import RestartPolicy, RestartTracker, read_state
from tests.services.cli.test_up import R42
from tests.services.cli.test_up import start_up as start_up  # the fixture
from tests.shared.runtime.kids import gone, kid_pids, wait_until, write_kid


def _cli(data: Path) -> NatsAuth:
    return NatsAuth(data / "nats" / "users" / "cli.nk", "_INBOX_cli")


def _status(data: Path) -> dict:
    done = subprocess.run(
        [*R42, "status", "--json", "--data-dir", str(data)], capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def test_killed_nats_server_comes_back_on_the_same_port(tmp_path: Path, start_up) -> None:
    data = tmp_path / "data"
    up = start_up(data, "-s", "kid=r42kid", env=write_kid(tmp_path / "kids"))
    state = await asyncio.to_thread(up.wait_ready, data, {"kid"})
    assert state.nats_pid
    nc = await nats.connect(state.nats_url, max_reconnect_attempts=-1, reconnect_time_wait=0.2,
                            **_cli(data).options())  # fmt: skip
    try:
        os.kill(state.nats_pid, signal.SIGKILL)

        def back() -> bool:
            now = read_state(data)
            return now is not None and now.nats_pid not in (None, state.nats_pid)

        await asyncio.to_thread(wait_until, back, timeout=60, what="nats-server restarted")
        after = read_state(data)
        assert after is not None and after.nats_url == state.nats_url  # same port
        # A client of the old server reconnects by itself and JetStream still has its streams.
        for _ in range(100):
            if nc.is_connected:
                break
            await asyncio.sleep(0.1)
        info = await nc.jetstream().stream_info("SOURCES")
        assert info.config.name == "SOURCES"
        doc = await asyncio.to_thread(_status, data)
        assert doc["nats"] == [{"pid": after.nats_pid, "url": after.nats_url}]
        assert doc["nats_restarts"] == 1
        assert [s["name"] for s in doc["services"]] == ["kid"]
        assert "[nats] killed by SIGKILL" in up.err.read_text()
    finally:
        await nc.close()
    up.proc.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(up.proc.wait, 60) == 0, up.output()
    assert gone(after.nats_pid)


async def test_sigkilled_up_leaves_nothing_and_next_up_keeps_the_port(
    tmp_path: Path, start_up
) -> None:
    data = tmp_path / "data"
    kids = write_kid(tmp_path / "kids")
    up = start_up(data, "-s", "kid=r42kid", env=kids)
    state = await asyncio.to_thread(up.wait_ready, data, {"kid"})
    up.proc.kill()
    up.proc.wait()
    # The kernel takes the server and the services down with their parent.
    await asyncio.to_thread(wait_until, lambda: gone(state.nats_pid or 0), what="nats gone")
    await asyncio.to_thread(
        wait_until, lambda: all(gone(p) for p in state.services.values()), what="kids gone"
    )
    again = start_up(data, "-s", "kid=r42kid", env=kids)
    second = await asyncio.to_thread(again.wait_ready, data, {"kid"})
    assert second.nats_url == state.nats_url  # clients of the first run find it again
    again.proc.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(again.proc.wait, 60) == 0, again.output()


async def test_events_tail_follows_a_restarted_up(tmp_path: Path, start_up) -> None:
    data = tmp_path / "data"
    kids = write_kid(tmp_path / "kids")
    up = start_up(data, "-s", "kid=r42kid", env=kids)
    state = await asyncio.to_thread(up.wait_ready, data, {"kid"})
    out, err = (tmp_path / "tail.out").open("wb"), tmp_path / "tail.err"
    with err.open("wb") as fe:
        tail = await asyncio.to_thread(
            subprocess.Popen,
            [*R42, "events", "tail", "--json", "--count", "2", "--data-dir", str(data)],
            stdout=out, stderr=fe, env={**os.environ, "NATS_URL": ""},
        )  # fmt: skip
    await asyncio.to_thread(
        wait_until, lambda: "listening on" in err.read_text(), timeout=60, what="tail listening"
    )

    async def publish(url: str, n: int) -> None:
        nc = await nats.connect(url, **_cli(data).options())
        try:
            body = json.dumps({"schema_version": 1, "event_id": f"e{n}"}).encode()
            await nc.jetstream().publish("source.uploaded", body)
        finally:
            await nc.close()

    await publish(state.nats_url, 1)
    up.proc.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(up.proc.wait, 60) == 0
    again = start_up(data, "-s", "kid=r42kid", env=kids)
    second = await asyncio.to_thread(again.wait_ready, data, {"kid"})
    await asyncio.to_thread(
        wait_until, lambda: "reconnected" in err.read_text(), timeout=60, what="tail reconnected"
    )
    await publish(second.nats_url, 2)
    try:
        assert await asyncio.to_thread(tail.wait, 60) == 0, (
            tail.stderr.read() if tail.stderr else ""
        )
    finally:
        if tail.poll() is None:
            tail.kill()
        out.close()
    lines = (tmp_path / "tail.out").read_text().splitlines()
    assert len(lines) == 2 and all("source.uploaded" in ln for ln in lines)
    again.proc.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(again.proc.wait, 60) == 0


def test_a_slow_crash_loop_is_stopped_by_the_window() -> None:
    now = [0.0]
    policy = RestartPolicy(max_restarts=3, restart_window_s=120, fast_exit_s=10)
    tracker = RestartTracker(policy, clock=lambda: now[0])
    # Each run lasts 30 s: never a "fast" crash, yet a loop.
    for _ in range(3):
        now[0] += 30
        assert tracker.on_exit(30.0) is not None
    now[0] += 30
    assert tracker.on_exit(30.0) is None
    assert "4 times within 120 s" in tracker.reason


def test_exits_spread_beyond_the_window_keep_restarting() -> None:
    now = [0.0]
    tracker = RestartTracker(
        RestartPolicy(max_restarts=2, restart_window_s=60), clock=lambda: now[0]
    )
    for _ in range(6):
        now[0] += 100
        assert tracker.on_exit(100.0) is not None


@pytest.mark.parametrize("store", ["mongodb://127.0.0.1:1/r42?serverSelectionTimeoutMS=500"])
def test_unreachable_store_fails_before_anything_starts(tmp_path: Path, store: str) -> None:
    data = tmp_path / "data"
    done = subprocess.run(
        [*R42, "up", "--no-console", "--data-dir", str(data), "-s", "kid=r42kid"],
        capture_output=True, text=True, timeout=90,
        env={**os.environ, **write_kid(tmp_path / "kids"), "R42_STORE": store},
    )  # fmt: skip
    assert done.returncode != 0
    assert "R42 is up" not in done.stdout
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert lines and "store" in lines[0] and "Traceback" not in done.stderr, done.stderr
    assert not (data / "nats").exists() and read_state(data) is None


def test_a_store_file_that_cannot_open_starts_no_service(tmp_path: Path) -> None:
    """The embedded SQLite file is checked while NATS starts, and gates every service."""
    data, kids = tmp_path / "data", tmp_path / "kids"
    (tmp_path / "a-file").write_text("not a directory")
    store = f"sqlite:///{tmp_path / 'a-file' / 'r42.db'}"
    done = subprocess.run(
        [*R42, "up", "--no-console", "--data-dir", str(data), "-s", "kid=r42kid"],
        capture_output=True, text=True, timeout=90,
        env={**os.environ, **write_kid(kids), "R42_STORE": store},
    )  # fmt: skip
    assert done.returncode != 0
    assert "R42 is up" not in done.stdout
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert lines and "store" in lines[0] and "Traceback" not in done.stderr, done.stderr
    assert kid_pids(kids, "kid") == [] and read_state(data) is None
    # The nats-server it started meanwhile is stopped again.
    left = [p for p in psutil.process_iter(["cmdline"])
            if any(str(data) in part for part in p.info["cmdline"] or [])]  # fmt: skip
    assert not left, [p.info["cmdline"] for p in left]


async def test_creds_adds_a_client_to_the_running_server(tmp_path: Path, start_up) -> None:
    data = tmp_path / "data"
    up = start_up(data, "-s", "kid=r42kid", env=write_kid(tmp_path / "kids"))
    state = await asyncio.to_thread(up.wait_ready, data, {"kid"})
    done = await asyncio.to_thread(
        subprocess.run, [*R42, "creds", "wiki-sync", "--role", "uploader", "--data-dir", str(data)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    seed = Path(done.stdout.splitlines()[-1])
    mode = await asyncio.to_thread(lambda: seed.stat().st_mode & 0o777)
    assert mode == 0o600
    assert "reloaded the running nats-server" in done.stdout
    errors: list[str] = []

    async def on_error(exc: Exception) -> None:
        errors.append(str(exc).lower())

    # Active at once, without restarting anything: the server re-read its users.
    nc = await nats.connect(state.nats_url, nkeys_seed=str(seed), inbox_prefix="_INBOX_wiki-sync",
                            error_cb=on_error)  # fmt: skip
    try:
        ack = await nc.jetstream().publish("source.uploaded", b"{}")
        assert ack.stream == "SOURCES"
        await nc.publish("kb.updated", b"{}")
        await nc.flush()
        for _ in range(50):
            if errors:
                break
            await asyncio.sleep(0.05)
        assert any('publish to "kb.updated"' in e for e in errors), errors
    finally:
        await nc.close()
    again = await asyncio.to_thread(
        subprocess.run, [*R42, "creds", "wiki-sync", "--role", "reader", "--data-dir", str(data)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert again.returncode == 2 and "exists with role uploader" in again.stderr
    up.proc.send_signal(signal.SIGTERM)
    assert await asyncio.to_thread(up.proc.wait, 60) == 0
