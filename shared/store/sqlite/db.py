"""One SQLite connection driven from a dedicated worker thread, with explicit transactions."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from shared.errors import (
    BadInputError,
    R42Error,
    StoreCorruptError,
    StoreError,
    StoreUnavailableError,
)
from shared.store._common import normalise_time
from shared.store.sqlite_file import prepare_file

T = TypeVar("T")

log = logging.getLogger(__name__)

MEMORY = ":memory:"
_CORRUPT_MARKERS = ("not a database", "malformed", "corrupt", "unable to open")
_BUSY_MARKERS = ("locked", "busy")
# Switching a new file to WAL answers "database is locked" at once (no busy handler) while
# another connection switches it: retried with a jittered backoff within this budget.
_WAL_BUDGET_S = 10.0
_WAL_FIRST_DELAY_S = 0.002
_WAL_MAX_DELAY_S = 0.05


def _is_busy(exc: sqlite3.Error) -> bool:
    return any(marker in str(exc).lower() for marker in _BUSY_MARKERS)


class _WalSwitchBlockedError(Exception):
    """The WAL switch stayed blocked for the whole budget (translated with the facts)."""

    def __init__(self, attempts: int, elapsed_s: float, last: sqlite3.Error) -> None:
        super().__init__(str(last))
        self.attempts = attempts
        self.elapsed_s = elapsed_s


def to_text(value: datetime | None) -> str | None:
    """A datetime as fixed-width ISO text (sorts chronologically)."""
    if value is None:
        return None
    return normalise_time(value).isoformat(timespec="milliseconds")


def from_text(value: str | None) -> datetime | None:
    """Parse what to_text wrote."""
    return None if value is None else datetime.fromisoformat(value)


def dumps(value: Any) -> str:
    """Compact JSON for a column."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def loads_or_none(value: str | None) -> Any:
    """Parse a nullable JSON column."""
    return None if value is None else json.loads(value)


class SqliteDb:
    """A connection used only from its own thread, so awaiting callers never block the loop.

    Every write runs in `BEGIN IMMEDIATE`: the write lock is taken up front, so a
    read-modify-write cannot fail half-way with SQLITE_BUSY when another process writes;
    the busy timeout makes writers from several processes queue instead of failing.
    """

    def __init__(self, path: str, *, busy_timeout_s: float = 30.0) -> None:
        self.path = path
        self.busy_timeout_s = busy_timeout_s
        self._conn: sqlite3.Connection | None = None
        self._executor: ThreadPoolExecutor | None = None

    @property
    def label(self) -> str:
        """How the database is named in messages."""
        return "in-memory SQLite store" if self.path == MEMORY else f"SQLite store at {self.path}"

    async def open(self) -> None:
        """Create the worker thread and connect (WAL, busy timeout)."""
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="r42-sqlite")
        try:
            await self._submit(self._connect)
        except BaseException:
            await self.close()
            raise

    def _connect(self) -> None:
        if self.path != MEMORY:
            prepare_file(self.path, self.label)
        conn = sqlite3.connect(
            self.path,
            timeout=self.busy_timeout_s,
            isolation_level=None,  # we issue BEGIN/COMMIT ourselves
            cached_statements=256,
        )
        try:
            if self.path != MEMORY:
                self._enable_wal(conn)
                # NORMAL is crash-safe in WAL mode (a power cut may lose the last commits only).
                conn.execute("PRAGMA synchronous=NORMAL")
            # Touch the schema so a corrupt or foreign file fails here, not at first use.
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except BaseException:
            conn.close()
            raise
        self._conn = conn

    def _enable_wal(self, conn: sqlite3.Connection) -> None:
        budget = min(self.busy_timeout_s, _WAL_BUDGET_S)
        started = time.monotonic()
        delay, attempts = _WAL_FIRST_DELAY_S, 0
        while True:
            attempts += 1
            try:
                mode = str(conn.execute("PRAGMA journal_mode=WAL").fetchone()[0])
                break
            except sqlite3.OperationalError as exc:
                elapsed = time.monotonic() - started
                if not _is_busy(exc):
                    raise
                if elapsed >= budget:
                    raise _WalSwitchBlockedError(attempts, elapsed, exc) from exc
                time.sleep(min(delay * random.uniform(0.5, 1.5), budget - elapsed))
                delay = min(delay * 2, _WAL_MAX_DELAY_S)
        if mode.lower() != "wal":
            # Some file systems (network mounts) refuse WAL; the store still works, slower.
            log.warning("%s stays in %s journal mode: WAL was refused", self.label, mode)

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run fn(conn) in a read transaction (one consistent snapshot)."""
        return await self._submit(partial(self._in_transaction, "BEGIN", fn))

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run fn(conn) in a write transaction; any exception rolls everything back."""
        return await self._submit(partial(self._in_transaction, "BEGIN IMMEDIATE", fn))

    def _in_transaction(self, begin: str, fn: Callable[[sqlite3.Connection], T]) -> T:
        conn = self._conn
        if conn is None:
            raise StoreError(f"{self.label} is closed")
        conn.execute(begin)
        try:
            result = fn(conn)
            conn.execute("COMMIT")
            return result
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    async def _submit(self, fn: Callable[[], T]) -> T:
        if self._executor is None:
            raise StoreError(f"{self.label} is closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, partial(self._guarded, fn))

    def _guarded(self, fn: Callable[[], T]) -> T:
        started = time.monotonic()
        try:
            return fn()
        except R42Error:
            raise
        except _WalSwitchBlockedError as exc:
            raise StoreUnavailableError(
                f"{self.label} could not switch to WAL journal mode: other connections kept "
                f"it locked for {exc.elapsed_s:.2f} s ({exc.attempts} attempt"
                f"{'' if exc.attempts == 1 else 's'}); try again"
            ) from exc
        except sqlite3.Error as exc:
            raise self._translate(exc, time.monotonic() - started) from exc

    def _translate(self, exc: sqlite3.Error, elapsed_s: float) -> R42Error:
        text = str(exc).lower()
        if isinstance(exc, sqlite3.IntegrityError):
            return BadInputError(f"rejected by a store constraint: {exc}")
        if _is_busy(exc):
            return StoreUnavailableError(
                f"{self.label} is locked by another connection ({exc}); gave up after "
                f"{elapsed_s:.2f} s (busy timeout {self.busy_timeout_s:g} s); try again"
            )
        if isinstance(exc, sqlite3.DatabaseError) and any(m in text for m in _CORRUPT_MARKERS):
            return StoreCorruptError(
                f"{self.label} cannot be read ({exc}); restore it from a backup or move it "
                "aside to start empty"
            )
        return StoreError(f"{self.label} failed: {exc}")

    async def close(self) -> None:
        """Close the connection and stop the worker thread."""
        executor, self._executor = self._executor, None
        if executor is None:
            return
        conn, self._conn = self._conn, None
        if conn is not None:
            await asyncio.get_running_loop().run_in_executor(executor, conn.close)
        executor.shutdown(wait=False)
