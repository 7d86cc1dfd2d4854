"""open_store picks the adapter from the URL and rejects anything else clearly."""

from __future__ import annotations

from pathlib import Path

import pytest

from shared.config import build_settings
from shared.errors import ConfigError
from shared.store import Topic, open_store, redact_url
from shared.store.factory import sqlite_path


@pytest.mark.parametrize(
    "url",
    ["", "postgres://db/r42", "sqlite://relative.db", "sqlite:///", "r42.db", "http://x"],
)
async def test_unsupported_urls_are_config_errors(url: str) -> None:
    with pytest.raises(ConfigError, match="sqlite:///ABSOLUTE/PATH"):
        await open_store(url)


async def test_config_error_hides_passwords() -> None:
    with pytest.raises(ConfigError) as info:
        await open_store("redis://admin:hunter2@cache:6379/0")
    assert "hunter2" not in str(info.value) and "admin:***@cache" in str(info.value)


def test_redact_url() -> None:
    assert redact_url("mongodb://u:pw@h/db?x=1") == "mongodb://u:***@h/db?x=1"
    assert redact_url("mongodb://h/db") == "mongodb://h/db"


def test_sqlite_url_forms() -> None:
    assert sqlite_path("sqlite:///srv/r42/r42.db") == "/srv/r42/r42.db"
    assert sqlite_path("sqlite:////srv/r42/r42.db") == "/srv/r42/r42.db"  # SQLAlchemy style
    assert sqlite_path("sqlite:///:memory:") == ":memory:"


async def test_memory_store_works() -> None:
    store = await open_store("sqlite:///:memory:")
    try:
        assert store.backend == "sqlite"
        await store.topics.upsert_many([Topic(id="a", label="A", type="concept")])
        assert await store.topics.ids() == {"a"}
    finally:
        await store.close()


async def test_default_store_is_a_file_in_the_data_dir(tmp_path: Path) -> None:
    settings = build_settings(data_dir=tmp_path / "data")
    store = await open_store(settings.store_url)
    await store.close()
    assert (tmp_path / "data" / "r42.db").is_file()


def test_the_precheck_knows_the_latest_migration() -> None:
    """`r42 up` refuses a newer store with this number, without importing the store package."""
    from shared.store.sqlite.migrations import LATEST_VERSION
    from shared.store.sqlite_file import SCHEMA_VERSION

    assert SCHEMA_VERSION == LATEST_VERSION, "bump shared.store.sqlite_file.SCHEMA_VERSION"
