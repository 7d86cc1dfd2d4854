"""Who may decide on the graph, set through real environment variables."""

from __future__ import annotations

import pytest

from services.extractor.admins import embedded, is_graph_admin
from shared.config import build_settings


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path) -> pytest.MonkeyPatch:  # type: ignore[no-untyped-def]
    for name in ("R42_ADMINS", "NATS_URL", "R42_STORE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("R42_DATA_DIR", str(tmp_path))
    return monkeypatch


def test_the_admin_list_decides_and_an_empty_list_means_nobody(env: pytest.MonkeyPatch) -> None:
    env.setenv("NATS_URL", "nats://nats.internal:4222")
    assert not is_graph_admin("U1", build_settings())
    env.setenv("R42_ADMINS", '["U1", "U2"]')  # the comma form is shared/config.py's to accept
    settings = build_settings()
    assert is_graph_admin("U1", settings) and is_graph_admin("U2", settings)
    assert not is_graph_admin("nobody", settings) and not is_graph_admin("", settings)


def test_the_console_operator_counts_only_in_the_embedded_runtime(
    env: pytest.MonkeyPatch,
) -> None:
    env.setenv("NATS_URL", "nats://127.0.0.1:4222")
    local = build_settings()
    assert embedded(local) and is_graph_admin("console-ann", local)
    assert not is_graph_admin("console-", local) and not is_graph_admin("nobody", local)
    env.setenv("NATS_URL", "nats://nats.internal:4222")
    assert not is_graph_admin("console-ann", build_settings())
    env.setenv("NATS_URL", "nats://127.0.0.1:4222")
    env.setenv("R42_STORE", "mongodb://db.internal:27017/r42")
    assert not embedded(build_settings())
