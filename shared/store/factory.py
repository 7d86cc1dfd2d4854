"""open_store(url): pick the adapter for a store URL."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from shared.errors import ConfigError
from shared.store.protocols import Store

_EXPECTED = "expected sqlite:///ABSOLUTE/PATH, sqlite:///:memory:, mongodb://… or mongodb+srv://…"


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


def sqlite_path(url: str) -> str:
    """The file path (or ':memory:') of a sqlite:/// URL."""
    path = url[len("sqlite://") :]
    if path == "/:memory:":
        return ":memory:"
    if not path.startswith("/") or not path.strip("/"):
        raise ConfigError(f"store URL {url!r} needs an absolute path; {_EXPECTED}")
    # sqlite:///abs and SQLAlchemy's sqlite:////abs both name /abs.
    return "/" + path.lstrip("/")


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
