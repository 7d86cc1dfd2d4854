"""`r42 up`'s check of the embedded SQLite file: what a service's open would fail on, said first."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from shared.errors import StoreCorruptError, StoreUnavailableError
from shared.store import open_store
from shared.store.sqlite_file import SCHEMA_VERSION, check_sqlite_file


def test_a_fresh_path_passes_and_its_folders_are_made(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "r42.db"
    check_sqlite_file(str(path))
    assert path.parent.is_dir()


async def test_a_migrated_store_passes(tmp_path: Path) -> None:
    path = tmp_path / "r42.db"
    store = await open_store(f"sqlite:///{path}")
    await store.close()
    check_sqlite_file(str(path))


def test_a_file_where_the_folder_should_be(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a directory")
    with pytest.raises(StoreCorruptError, match="cannot create the data dir"):
        check_sqlite_file(str(tmp_path / "a-file" / "r42.db"))


def test_a_directory_in_place_of_the_file(tmp_path: Path) -> None:
    (tmp_path / "r42.db").mkdir()
    with pytest.raises(StoreCorruptError, match="it is a directory"):
        check_sqlite_file(str(tmp_path / "r42.db"))


def test_a_file_that_is_not_a_database_is_left_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "r42.db"
    text = "# notes\n" * 500
    path.write_text(text)
    with pytest.raises(StoreCorruptError, match="cannot be read: file is not a database"):
        check_sqlite_file(str(path))
    assert path.read_text() == text


def test_a_store_newer_than_this_r42(tmp_path: Path) -> None:
    path = tmp_path / "r42.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY)")
        conn.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreCorruptError, match=f"version {SCHEMA_VERSION + 1}, newer than"):
        check_sqlite_file(str(path))


def test_a_write_lock_held_elsewhere_times_out_as_unavailable(tmp_path: Path) -> None:
    """Another process holding the write lock past the timeout: unavailable (try again)."""
    path = tmp_path / "r42.db"
    check_sqlite_file(str(path))
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sqlite3, sys, time\n"
         f"c = sqlite3.connect({str(path)!r}, isolation_level=None)\n"
         "c.execute('BEGIN IMMEDIATE'); print('held', flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(StoreUnavailableError, match="cannot be written: database is locked"):
            check_sqlite_file(str(path), timeout_s=0.2)
    finally:
        holder.kill()
        holder.wait()
    check_sqlite_file(str(path), timeout_s=0.2)  # free again
