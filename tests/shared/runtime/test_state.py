"""The runtime state file, the data-dir lock, stale-process cleanup and the lazy package."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import nats
import nats.errors
import pytest

import shared.runtime as runtime
from shared.bus import NatsAuth
from shared.runtime import (
    EmbeddedNatsServer,
    EmbeddedRuntime,
    RuntimeBusyError,
    RuntimeLock,
    RuntimeState,
    display_url,
    find_running,
    pid_alive,
    read_state,
    remove_state,
    state_path,
    write_state,
)
from tests.shared.runtime.kids import gone


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_state_round_trips_and_is_private(tmp_path: Path) -> None:
    state = RuntimeState(pid=os.getpid(), data_dir=str(tmp_path), nats_url="nats://127.0.0.1:1")
    state.services = {"extractor": 123}
    write_state(tmp_path, state)
    assert read_state(tmp_path) == state
    assert stat.S_IMODE(state_path(tmp_path).stat().st_mode) == 0o600
    assert find_running(tmp_path) == state


def test_unreadable_or_stale_state_counts_as_not_running(tmp_path: Path) -> None:
    assert read_state(tmp_path) is None
    state_path(tmp_path).write_text("{not json")
    assert read_state(tmp_path) is None
    stale = RuntimeState(pid=_dead_pid(), data_dir=str(tmp_path), nats_url="nats://x:1")
    write_state(tmp_path, stale)
    assert read_state(tmp_path) == stale
    assert find_running(tmp_path) is None


def test_remove_state_leaves_another_owners_file(tmp_path: Path) -> None:
    write_state(tmp_path, RuntimeState(pid=1, data_dir=str(tmp_path), nats_url="nats://x:1"))
    remove_state(tmp_path, owner_pid=os.getpid())
    assert state_path(tmp_path).exists()
    remove_state(tmp_path, owner_pid=1)
    assert not state_path(tmp_path).exists()


def test_lock_is_exclusive_and_released(tmp_path: Path) -> None:
    first = RuntimeLock(tmp_path).acquire()
    write_state(tmp_path, RuntimeState(pid=os.getpid(), data_dir=str(tmp_path), nats_url="n"))
    with pytest.raises(RuntimeBusyError, match=f"already running on .*pid {os.getpid()}"):
        RuntimeLock(tmp_path).acquire()
    first.release()
    RuntimeLock(tmp_path).acquire().release()


def test_pid_alive() -> None:
    assert pid_alive(os.getpid())
    assert not pid_alive(_dead_pid())
    assert not pid_alive(0)


def test_display_url_masks_credentials() -> None:
    assert display_url("nats://user:pw@127.0.0.1:4222") == "nats://***@127.0.0.1:4222"
    assert display_url("mongodb://u:p@h1:1,h2:2/db?replicaSet=rs") == (
        "mongodb://***@h1:1,h2:2/db?replicaSet=rs"
    )
    assert display_url("sqlite:////tmp/r42.db") == "sqlite:////tmp/r42.db"


def test_package_exports_resolve() -> None:
    for name in runtime.__all__:
        assert getattr(runtime, name) is not None
    with pytest.raises(AttributeError):
        _ = runtime.no_such_name  # type: ignore[attr-defined]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc")
async def test_start_stops_the_server_a_crashed_run_left_behind(tmp_path: Path) -> None:
    data = tmp_path / "data"
    orphan = EmbeddedNatsServer(data / "nats").start()
    try:
        assert orphan.proc is not None
        orphan_pid = orphan.proc.pid
        crashed = RuntimeState(
            pid=_dead_pid(), data_dir=str(data), nats_url=orphan.url, nats_pid=orphan_pid,
            nats_store=str((data / "nats").resolve()), services={"kid": _dead_pid()},
        )  # fmt: skip
        write_state(data, crashed)
        rt = EmbeddedRuntime(data_dir=data, services=())
        state = await rt.start()
        try:
            assert any(f"nats-server (pid {orphan_pid})" in note for note in rt.notes)
            assert orphan.proc.wait(timeout=10) is not None
            assert state.nats_url != orphan.url and state.nats_pid != orphan_pid
            assert state.nats_auth and state.users_dir
            with pytest.raises(nats.errors.Error):  # anonymous clients are refused
                await nats.connect(state.nats_url, allow_reconnect=False, max_reconnect_attempts=1)
            cli = NatsAuth(Path(state.users_dir) / "cli.nk", "_INBOX_cli")
            nc = await nats.connect(state.nats_url, **cli.options())
            await nc.close()
            assert read_state(data) == state
        finally:
            await rt.stop()
        assert not state_path(data).exists()
        assert state.nats_pid is not None and gone(state.nats_pid)
    finally:
        orphan.stop()
