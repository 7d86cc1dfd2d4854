"""A long shared 429 pause: chat answers "R42 is druk tot HH:MM" at once, not after 90 s."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest

from services.r42.knowledge import KbCache
from services.r42.turn import chat_turn
from shared.bus import ChatRequest
from shared.llm import LLMRuntime, LocalLimiter, reset_llm
from shared.store import Store
from tests.fakes.anthropic_server import FakeAnthropic, rate_limited, text_reply
from tests.fakes.fixtures import configure_llm_for_fake


@pytest.fixture
async def limited_llm(
    fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[LLMRuntime]:
    """shared.llm against the fake, with the limiter every service shares; local time CET."""
    monkeypatch.setenv("TZ", "Europe/Amsterdam")
    time.tzset()
    runtime = configure_llm_for_fake(fake_anthropic, limiter=LocalLimiter())
    yield runtime
    await runtime.aclose()
    reset_llm()
    monkeypatch.delenv("TZ")
    time.tzset()


async def test_a_long_429_pause_answers_busy_at_once(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, limited_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(rate_limited(retry_after=120), text_reply("nooit"))
    started, before = time.monotonic(), time.time()
    question = "Hoe werkt verlof?"
    first = await chat_turn(store=store, kb=kb, request=ChatRequest(user_id="U1", text=question))
    after = time.time()
    second = await chat_turn(store=store, kb=kb, request=ChatRequest(user_id="U2", text=question))
    elapsed = time.monotonic() - started
    # The pause starts when the 429 arrives, somewhere inside the first turn: its end
    # (rounded up a minute) is the minute of either edge of that window.
    said = {time.strftime("%H:%M", time.localtime(t + 120 + 59)) for t in (before, after)}
    assert first.text == second.text
    assert first.text in {f"R42 is druk tot {u}. Probeer het daarna nog eens." for u in said}
    assert first.error_ref is None
    assert elapsed < 5, "the busy answer comes at once, not after the 90 s turn budget"
    assert len(fake_anthropic.requests) == 1  # the second turn sent nothing into the pause
    assert not [m for m in await store.threads.get("U2") if m.role == "user"]
