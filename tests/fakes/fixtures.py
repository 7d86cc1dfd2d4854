"""Pytest fixtures for the fake servers in tests/fakes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from shared.config import build_settings
from shared.llm import (
    LLMRuntime,
    MemorySink,
    RetryPolicy,
    TelemetrySink,
    configure_llm,
    reset_llm,
)
from shared.llm.limiting import Limiter
from shared.llm.providers.lazy import LazyAnthropicProvider
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.slack_server import FakeSlack

# ---------------------------------------------------------------------------------------
# Anthropic

# Distinctive, so a test can search logs and errors for it; never a real key.
FAKE_ANTHROPIC_API_KEY = "sk-ant-fake-9f2c41d7e8b3a6c5-do-not-log"

# Fast retries for tests; tests about real backoff build their own RetryPolicy.
FAST_RETRY = RetryPolicy(base=0.01, cap=0.05)


def configure_llm_for_fake(
    fake: FakeAnthropic,
    *,
    sink: TelemetrySink | None = None,
    limiter: Limiter | None = None,
    retry: RetryPolicy | None = None,
    **settings: Any,
) -> LLMRuntime:
    """Point shared.llm at the fake (anthropic provider, dummy key); MemorySink by default."""
    runtime = configure_llm(
        build_settings(
            anthropic_base_url=fake.url,
            anthropic_api_key=FAKE_ANTHROPIC_API_KEY,
            llm="anthropic",
            **settings,
        ),
        sink=sink if sink is not None else MemorySink(),
        limiter=limiter,
        retry=retry or FAST_RETRY,
    )
    # The SDK loads on a process's first call; load it now, so that no test's timing
    # includes the one-time import.
    if isinstance(runtime.provider, LazyAnthropicProvider):
        runtime.provider.provider()
    return runtime


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    """A fresh fake Anthropic server on a free loopback port."""
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
async def fake_llm(
    fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[LLMRuntime]:
    """shared.llm configured against `fake_anthropic` (env set too, for child processes)."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_ANTHROPIC_API_KEY)
    monkeypatch.setenv("R42_LLM", "anthropic")
    runtime = configure_llm_for_fake(fake_anthropic)
    yield runtime
    await runtime.aclose()
    reset_llm()


@pytest.fixture
def offline_llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[LLMRuntime]:
    """shared.llm configured with the offline provider and a MemorySink."""
    monkeypatch.setenv("R42_LLM", "offline")
    yield configure_llm(build_settings(llm="offline"), sink=MemorySink())
    reset_llm()


# ---------------------------------------------------------------------------------------
# Slack

# Distinctive, so tests can assert they never reach a log; never real credentials.
FAKE_SLACK_BOT_TOKEN = "xoxb-fake-5c1e9a77d0b2-do-not-log"
FAKE_SLACK_SIGNING_SECRET = "fake-signing-secret-3b8f0d2c41e6-do-not-log"
FAKE_SLACK_APP_TOKEN = "xapp-fake-77aa10c4e9-do-not-log"


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    """A fresh fake Slack Web API on a free loopback port (see tests/fakes/slack_server.py)."""
    with FakeSlack() as server:
        yield server
