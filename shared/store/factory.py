"""open_store(url): pick the adapter for a store URL."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from shared.errors import ConfigError
from shared.store.protocols import Store
from shared.store.sqlite_file import EXPECTED_URLS as _EXPECTED
from shared.store.sqlite_file import sqlite_path as sqlite_path


def redact_url(url: str) -> str:
    """The URL with any password replaced, safe for messages and logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable URL>"
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


async def open_store(url: str) -> Store:
    """Open (and migrate) the store a URL names: SQLite file or MongoDB."""
    url = (url or "").strip()
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme == "sqlite":
        from shared.store.sqlite import SqliteStore

        return await SqliteStore.open(sqlite_path(url))
    if scheme in ("mongodb", "mongodb+srv"):
        from shared.store.mongo import MongoStore

        return await MongoStore.open(url)
    shown = redact_url(url) if url else "(empty)"
    raise ConfigError(f"unsupported store URL {shown}; {_EXPECTED}")
