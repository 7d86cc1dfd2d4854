"""Session fixtures: one real nats-server with JetStream per test session."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import nats
import pytest

from shared.bus.objects import SOURCES_BUCKET
from shared.runtime import EmbeddedNatsServer

# Fixtures for the fake Anthropic and fake Slack servers live beside the fakes.
pytest_plugins = ["tests.fakes.fixtures"]


@pytest.fixture(scope="session")
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedNatsServer]:
    """A real nats-server (JetStream on, free port, temp store) shared by the session."""
    # Every test namespace reserves its streams' max_bytes: allow far more than one stack.
    server = EmbeddedNatsServer(tmp_path_factory.mktemp("nats"), max_file_store="100TB").start()
    asyncio.run(_sources_bucket(server.url))
    yield server
    server.stop()


async def _sources_bucket(url: str) -> None:
    # What `r42 up` creates on start: the bucket every uploader puts source files into.
    nc = await nats.connect(url)
    try:
        await nc.jetstream().create_object_store(SOURCES_BUCKET)
    finally:
        await nc.close()


@pytest.fixture
def nats_url(nats_server: EmbeddedNatsServer) -> str:
    """The URL of the session's nats-server."""
    return nats_server.url


@pytest.fixture
def unique() -> str:
    """A short unique token for per-test subjects, streams and buckets."""
    return uuid.uuid4().hex[:10]


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Keep tests off real credentials and the developer's data dir."""
    for name in ("ANTHROPIC_API_KEY", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "NATS_URL",
                 "R42_STORE", "R42_LLM", "ANTHROPIC_BASE_URL"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("R42_DATA_DIR", str(tmp_path / "data"))
