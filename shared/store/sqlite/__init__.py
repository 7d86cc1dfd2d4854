"""SQLite adapter: the embedded default store."""

from shared.store.sqlite.migrations import LATEST_VERSION
from shared.store.sqlite.store import SqliteStore

__all__ = ["LATEST_VERSION", "SqliteStore"]
