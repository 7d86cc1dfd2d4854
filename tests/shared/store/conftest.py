"""The `store` fixture: every contract test runs against SQLite and (when reachable) MongoDB."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from shared.store import Store, open_store

MONGO_SKIP = "MongoDB: set R42_TEST_MONGODB_URL or start a Docker engine"


def _docker_answers() -> bool:
    try:
        import docker

        docker.from_env().ping()
    except Exception:  # any failure means no usable engine
        return False
    return True


@pytest.fixture(scope="session")
def mongodb_url() -> Iterator[str]:
    """A MongoDB server URL: R42_TEST_MONGODB_URL, else a testcontainers MongoDB, else skip."""
    url = os.environ.get("R42_TEST_MONGODB_URL")
    if url:
        yield url
        return
    if not _docker_answers():
        pytest.skip(MONGO_SKIP)
    from testcontainers.community.mongodb import MongoDbContainer

    with MongoDbContainer("mongo:7.0") as container:
        yield container.get_connection_url()


@pytest.fixture(params=["sqlite", "mongodb"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    """A fresh, migrated store of each kind (a unique MongoDB database per test)."""
    if request.param == "sqlite":
        opened = await open_store(f"sqlite:///{tmp_path / 'store.db'}")
        yield opened
        await opened.close()
        return
    url = request.getfixturevalue("mongodb_url")
    from shared.store.mongo import MongoStore

    name = f"r42_test_{uuid.uuid4().hex[:12]}"
    opened = await MongoStore.open(url, database=name)
    try:
        yield opened
    finally:
        await opened.db.client.drop_database(name)
        await opened.close()
