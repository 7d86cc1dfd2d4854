"""The embedded SQLite file as `r42 up` checks it before any service starts (stdlib only).

The full check (open the store, run its migrations) imported the whole store package first:
~0.15 s of CPU, in the supervisor's own process, between NATS being healthy and the first
service forked. This opens the file with the standard library and asks what an open would
fail on: a path that cannot be created, a directory, a file that is not a database, a
schema newer than this R42, a write lock that never comes. The services migrate on open.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from shared.errors import ConfigError, StoreCorruptError, StoreUnavailableError

SCHEMA_VERSION = 15
"""The SQLite store's latest migration (shared.store.sqlite.migrations; a test keeps them equal)."""
MEMORY = ":memory:"
EXPECTED_URLS = (
    "expected sqlite:///ABSOLUTE/PATH, sqlite:///:memory:, mongodb://… or mongodb+srv://…"
)


def sqlite_path(url: str) -> str:
    """The file path (or ':memory:') of a sqlite:/// URL."""
    path = url[len("sqlite://") :]
    if path == "/:memory:":
        return MEMORY
    if not path.startswith("/") or not path.strip("/"):
        raise ConfigError(f"store URL {url!r} needs an absolute path; {EXPECTED_URLS}")
    # sqlite:///abs and SQLAlchemy's sqlite:////abs both name /abs.
    return "/" + path.lstrip("/")


def prepare_file(path: str, label: str) -> None:
    """Make the folders of a store file; StoreCorruptError when they cannot be, or it is one."""
    file = Path(path)
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreCorruptError(f"cannot create the data dir {file.parent}: {exc}") from exc
    if file.is_dir():
        raise StoreCorruptError(f"{label} cannot be read: it is a directory")


def current_version(conn: sqlite3.Connection) -> int:
    """The applied schema version (0 for a fresh or legacy file)."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ).fetchone()
    if not exists:
        return 0
    row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def newer_schema(version: int, latest: int) -> str:
    """What a store whose schema is newer than this R42 is told."""
    return (
        f"the store is at schema version {version}, newer than this R42 understands "
        f"({latest}); upgrade R42"
    )


def check_sqlite_file(path: str, *, timeout_s: float = 10.0) -> None:
    """Raise StoreCorruptError or StoreUnavailableError when the store at `path` cannot open."""
    if path == MEMORY:
        return
    prepare_file(path, path)
    try:
        conn = sqlite3.connect(path, timeout=timeout_s, isolation_level=None)
    except sqlite3.Error as exc:
        raise StoreCorruptError(f"{path} cannot be opened: {exc}") from None
    try:
        _check(conn, path)
    finally:
        conn.close()


def _check(conn: sqlite3.Connection, path: str) -> None:
    try:
        # A foreign or corrupt file fails on its first read of the schema.
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        version = current_version(conn)
    except sqlite3.DatabaseError as exc:
        raise StoreCorruptError(f"{path} cannot be read: {exc}") from None
    if version > SCHEMA_VERSION:
        raise StoreCorruptError(newer_schema(version, SCHEMA_VERSION))
    try:  # the write lock every service's first write takes
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ROLLBACK")
    except sqlite3.OperationalError as exc:
        raise StoreUnavailableError(f"{path} cannot be written: {exc}") from None
