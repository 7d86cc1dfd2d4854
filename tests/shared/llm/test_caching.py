"""Prompt caching through call_llm against the fake Anthropic server (it caches as the API does)."""

from __future__ import annotations

import logging
from typing import Any

import httpx2
import pytest

from shared.llm import LLMRuntime, call_llm
from shared.llm.caching import COUNT_MARGIN, min_cacheable_tokens
from tests.fakes.anthropic_cache import count_tokens
from tests.fakes.anthropic_server import FakeAnthropic, error_reply

MARK = {"type": "ephemeral"}


def system(text: str, *, marked: bool = True) -> list[dict[str, Any]]:
    block: dict[str, Any] = {"type": "text", "text": text}
    if marked:
        block["cache_control"] = dict(MARK)
    return [{"type": "text", "text": "You are R42."}, block]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_an_identical_prefix_is_read_from_the_cache_for_five_minutes(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime, unique: str
) -> None:
    clock = Clock()
    fake_anthropic.cache.clock = clock
    minimum = min_cacheable_tokens(fake_llm.settings.model_standard)
    big = "Onderwerpen: pensioen, verlof en declaraties. " * (minimum // 6)  # floor ≥ minimum
    blocks = system(big)
    prefix = count_tokens({"system": blocks, "messages": []})
    first = await call_llm(task=f"t-{unique}", system=blocks, user="vraag 1")
    assert first.usage.cache_creation_input_tokens == prefix >= minimum
    assert first.usage.cache_read_input_tokens == 0
    clock.now += 299
    second = await call_llm(task=f"t-{unique}", system=blocks, user="vraag 2")
    assert second.usage.cache_read_input_tokens == prefix
    assert second.usage.cache_creation_input_tokens == 0
    assert second.usage.input_tokens < prefix  # only what follows the cached prefix
    clock.now += 299  # the read refreshed the entry
    assert (
        await call_llm(task=f"t-{unique}", system=blocks, user="3")
    ).usage.cache_read_input_tokens
    clock.now += 301  # five minutes without a read: gone
    expired = await call_llm(task=f"t-{unique}", system=blocks, user="vraag 4")
    assert expired.usage.cache_read_input_tokens == 0
    assert expired.usage.cache_creation_input_tokens == prefix
    changed = await call_llm(task=f"t-{unique}", system=system(big + "!"), user="vraag 5")
    assert changed.usage.cache_read_input_tokens == 0  # one character busts the prefix
    assert fake_anthropic.counts == []  # a floor above the minimum needs no count


async def test_a_prefix_near_the_minimum_is_counted_once_with_count_tokens(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime, unique: str
) -> None:
    minimum = min_cacheable_tokens(fake_llm.settings.model_standard)
    # ~3 characters per token: the floor (chars / 5) is below the minimum, the count above it.
    near = unique + " pensioen verlof declaratie " * (minimum * 4 // 27)  # unique: never counted
    blocks = system(near)
    assert len(near) / 5 < minimum <= count_tokens({"system": blocks, "messages": []})
    first = await call_llm(task=f"t-{unique}", system=blocks, user="vraag 1")
    second = await call_llm(task=f"t-{unique}", system=blocks, user="vraag 2")
    sent = fake_anthropic.requests[0].body["system"]
    assert sent[1]["cache_control"] == MARK  # kept: the exact count qualifies
    assert first.usage.cache_creation_input_tokens > 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    (count,) = fake_anthropic.counts  # the same prefix is counted once
    assert count.status == 200 and set(count.body) == {"model", "system", "messages"}
    assert count.body["system"] == blocks
    assert count.body["model"] == fake_llm.settings.model_standard


async def test_a_counted_prefix_below_the_minimum_is_dropped_with_a_warning(
    fake_anthropic: FakeAnthropic,
    fake_llm: LLMRuntime,
    unique: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="shared.llm")
    minimum = min_cacheable_tokens(fake_llm.settings.model_standard)
    short = unique + " verlof " * (minimum * 2 // 7)  # ~2/3 of the minimum in the fake's tokens
    counted = count_tokens(
        {"system": system(short), "messages": [{"role": "user", "content": "."}]}
    )
    result = await call_llm(task=f"short-{unique}", system=system(short), user="vraag")
    assert "cache_control" not in fake_anthropic.requests[0].body["system"][1]
    assert result.usage.cache_creation_input_tokens == 0
    (warning,) = [r for r in caplog.records if f"short-{unique}" in r.getMessage()]
    assert f"{minimum - (counted - COUNT_MARGIN)} short of" in warning.getMessage()


async def test_when_counting_fails_the_floor_decides_and_the_call_goes_on(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime, unique: str
) -> None:
    fake_anthropic.count_error = error_reply(529, "overloaded_error", "Overloaded")
    minimum = min_cacheable_tokens(fake_llm.settings.model_standard)
    near = unique + " pensioen verlof declaratie " * (minimum * 4 // 27)
    result = await call_llm(task=f"t-{unique}", system=system(near), user="vraag")
    assert result.text and len(fake_anthropic.counts) == 1
    assert "cache_control" not in fake_anthropic.requests[0].body["system"][1]


async def test_more_than_four_marks_keep_the_four_longest_prefixes(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime, unique: str
) -> None:
    minimum = min_cacheable_tokens(fake_llm.settings.model_standard)
    part = "Onderwerpen: pensioen, verlof en declaraties. " * (minimum // 6)
    blocks = [
        {"type": "text", "text": f"{i} {part}", "cache_control": dict(MARK)} for i in range(6)
    ]
    await call_llm(task=f"t-{unique}", system=blocks, user="vraag")
    sent = fake_anthropic.requests[0].body["system"]
    assert ["cache_control" in block for block in sent] == [False, False, True, True, True, True]


async def test_the_fake_refuses_what_the_api_refuses(fake_anthropic: FakeAnthropic) -> None:
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    base = {"model": "claude-sonnet-4-6", "max_tokens": 10}
    five = [{"type": "text", "text": str(i), "cache_control": dict(MARK)} for i in range(5)]
    async with httpx2.AsyncClient(base_url=fake_anthropic.url, headers=headers) as client:
        too_many = await client.post(
            "/v1/messages",
            json={**base, "system": five, "messages": [{"role": "user", "content": "x"}]},
        )
        bad_type = await client.post("/v1/messages", json={
            **base, "messages": [{"role": "user", "content": [
                {"type": "text", "text": "x", "cache_control": {"type": "persistent"}}]}],
        })  # fmt: skip
        counted = await client.post(
            "/v1/messages/count_tokens",
            json={"model": "claude-sonnet-4-6", "messages": [{"role": "user", "content": "hoi"}]},
        )
        with_max = await client.post("/v1/messages/count_tokens", json={**base, "messages": [
            {"role": "user", "content": "hoi"}]})  # fmt: skip
    assert too_many.status_code == 400
    assert too_many.json()["error"]["message"].startswith(
        "A maximum of 4 blocks with cache_control"
    )
    assert bad_type.status_code == 400 and "ephemeral" in bad_type.json()["error"]["message"]
    assert counted.status_code == 200 and counted.json() == {"input_tokens": 3 + 1}
    assert with_max.status_code == 400 and with_max.json()["type"] == "error"
