"""The fake Anthropic server itself: rate-limit mode, recording, request checks."""

from __future__ import annotations

import asyncio
import time

import httpx2
import pytest

from shared.llm import LLMRuntime, call_llm, get_runtime
from tests.fakes.anthropic_server import FakeAnthropic, text_reply
from tests.fakes.fixtures import FAKE_ANTHROPIC_API_KEY

BODY = {
    "model": "claude-haiku-4-5",
    "max_tokens": 10,
    "messages": [{"role": "user", "content": "x"}],
}
HEADERS = {"x-api-key": "k", "anthropic-version": "2023-06-01"}


@pytest.mark.parametrize("sliding", [True, False])
async def test_rate_limit_mode_answers_429_with_retry_after(
    fake_anthropic: FakeAnthropic, sliding: bool
) -> None:
    fake_anthropic.rate_limit(3, window_s=60, sliding=sliding)
    async with httpx2.AsyncClient(base_url=fake_anthropic.url) as client:
        responses = [
            await client.post("/v1/messages", json=BODY, headers=HEADERS) for _ in range(5)
        ]
    assert [r.status_code for r in responses] == [200, 200, 200, 429, 429]
    limited = responses[3]
    assert 1 <= int(limited.headers["retry-after"]) <= 60
    assert limited.headers["anthropic-ratelimit-requests-remaining"] == "0"
    assert limited.json()["error"]["type"] == "rate_limit_error"
    assert [r.status for r in fake_anthropic.requests] == [200, 200, 200, 429, 429]


async def test_sliding_window_frees_up_after_the_window(fake_anthropic: FakeAnthropic) -> None:
    fake_anthropic.rate_limit(2, window_s=0.5, precise=True)
    async with httpx2.AsyncClient(base_url=fake_anthropic.url) as client:
        responses = [
            await client.post("/v1/messages", json=BODY, headers=HEADERS) for _ in range(3)
        ]
        await asyncio.sleep(0.6)
        later = await client.post("/v1/messages", json=BODY, headers=HEADERS)
    assert [r.status_code for r in responses] == [200, 200, 429]
    assert 0 < int(responses[2].headers["retry-after-ms"]) <= 500
    assert later.status_code == 200


async def test_requests_without_a_key_or_model_are_rejected(fake_anthropic: FakeAnthropic) -> None:
    async with httpx2.AsyncClient(base_url=fake_anthropic.url) as client:
        no_key = await client.post("/v1/messages", json=BODY)
        no_model = await client.post("/v1/messages", json={"max_tokens": 1}, headers=HEADERS)
    assert no_key.status_code == 401 and no_key.json()["error"]["type"] == "authentication_error"
    assert no_model.status_code == 400


async def test_default_responder_and_recording(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.default = lambda body: text_reply(f"echo: {body['messages'][-1]['content']}")
    fake_anthropic.enqueue(text_reply("scripted first"))
    assert (await call_llm(task="t", user="one")).text == "scripted first"
    assert (await call_llm(task="t", user="two")).text == "echo: two"
    first, second = fake_anthropic.requests
    assert first.path == "/v1/messages" and first.body["messages"][0]["content"] == "one"
    assert first.monotonic <= second.monotonic and abs(first.wall - time.time()) < 60
    assert get_runtime().settings.anthropic_api_key.get_secret_value() == FAKE_ANTHROPIC_API_KEY


async def test_unconfigured_call_with_a_key_in_the_environment_uses_anthropic(
    fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_ANTHROPIC_API_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_anthropic.url)
    fake_anthropic.enqueue(text_reply("from the fake"))
    result = await call_llm(task="t", user="hi")
    assert (result.text, result.provider) == ("from the fake", "anthropic")
    assert len(fake_anthropic.requests) == 1
    await get_runtime().aclose()
