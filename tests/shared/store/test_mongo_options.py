"""The Mongo client takes the URL's own server-selection timeout (no server needed to check)."""

from __future__ import annotations

from shared.store.mongo.client import MongoDb


async def test_the_urls_server_selection_timeout_wins_over_the_default() -> None:
    given = MongoDb("mongodb://127.0.0.1:1/r42?serverSelectionTimeoutMS=500", timeout_ms=10_000)
    default = MongoDb("mongodb://127.0.0.1:1/r42?appName=x", timeout_ms=10_000)
    try:
        assert given.client.options.server_selection_timeout == 0.5
        assert default.client.options.server_selection_timeout == 10.0
    finally:
        await given.client.close()
        await default.client.close()
