"""A broken, busy or too-new SQLite file gives a clear R42 error, never a raw traceback."""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

import pytest

from shared.errors import StoreCorruptError, StoreError, StoreUnavailableError
from shared.store import Topic, open_store
from shared.store.sqlite import SqliteStore


async def test_random_bytes_file_is_reported_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "r42.db"
    path.write_bytes(os.urandom(8192))
    with pytest.raises(StoreCorruptError) as info:
        await open_store(f"sqlite:///{path}")
    message = str(info.value)
    assert str(path) in message and "cannot be read" in message
    assert "backup" in message


async def test_directory_in_place_of_the_file_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "r42.db"
    path.mkdir()
    with pytest.raises(StoreCorruptError, match="is a directory"):
        await open_store(f"sqlite:///{path}")


async def test_missing_data_dir_is_created(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "data" / "r42.db"
    store = await open_store(f"sqlite:///{path}")
    await store.close()
    assert path.is_file()


async def test_data_dir_that_is_a_file_is_reported(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("not a dir")
    with pytest.raises(StoreCorruptError, match="data dir"):
        await open_store(f"sqlite:///{blocker / 'r42.db'}")


async def test_a_store_newer_than_the_code_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "r42.db"
    store = await open_store(f"sqlite:///{path}")
    await store.close()
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_version VALUES (99, 'from the future', '2030-01-01')")
    with pytest.raises(StoreError, match="newer than this R42"):
        await open_store(f"sqlite:///{path}")


async def test_a_writer_holding_the_lock_too_long_is_a_transient_error(tmp_path: Path) -> None:
    path = tmp_path / "r42.db"
    store = await SqliteStore.open(str(path), busy_timeout_s=0.2)
    blocker = sqlite3.connect(path, isolation_level=None)
    try:
        blocker.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreUnavailableError, match="locked") as info:
            await store.topics.upsert_many([Topic(id="a", label="A", type="concept")])
        assert info.value.transient
        # The message says how long it really waited, not a figure from the settings alone.
        waited = re.search(r"gave up after ([0-9.]+) s \(busy timeout 0.2 s\)", str(info.value))
        assert waited is not None and 0.15 <= float(waited.group(1)) < 5
        blocker.execute("ROLLBACK")
        await store.topics.upsert_many([Topic(id="a", label="A", type="concept")])
        assert await store.topics.ids() == {"a"}
    finally:
        blocker.close()
        await store.close()


async def test_closed_store_refuses_work(tmp_path: Path) -> None:
    store = await open_store(f"sqlite:///{tmp_path / 'r42.db'}")
    await store.close()
    await store.close()  # idempotent
    with pytest.raises(StoreError, match="closed"):
        await store.topics.ids()


async def test_a_wal_switch_blocked_throughout_says_what_happened(tmp_path: Path) -> None:
    path = tmp_path / "r42.db"
    blocker = sqlite3.connect(path, isolation_level=None)
    try:
        blocker.execute("CREATE TABLE t (x)")  # a rollback-journal file, exclusively locked
        blocker.execute("BEGIN EXCLUSIVE")
        with pytest.raises(StoreUnavailableError) as info:
            await SqliteStore.open(str(path), busy_timeout_s=0.3)
        message = str(info.value)
        assert "could not switch to WAL journal mode" in message and str(path) in message
        waited = re.search(r"locked for ([0-9.]+) s \((\d+) attempts?\)", message)
        assert waited is not None and 0.25 <= float(waited.group(1)) < 5
        assert info.value.transient
        blocker.execute("ROLLBACK")
        store = await SqliteStore.open(str(path), busy_timeout_s=0.3)
        await store.close()
    finally:
        blocker.close()
