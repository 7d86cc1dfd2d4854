"""The API key is sent to the API but never appears in a log record or an error."""

from __future__ import annotations

import logging

import pytest

from shared.llm import LLMError, LLMRuntime, call_llm, get_runtime
from tests.fakes.anthropic_server import (
    FakeAnthropic,
    error_reply,
    overloaded,
    rate_limited,
    slow,
    text_reply,
)
from tests.fakes.fixtures import FAKE_ANTHROPIC_API_KEY


async def test_api_key_is_sent_but_never_logged_or_raised(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    for name in ("anthropic", "httpx2", "httpcore2", "shared.llm"):
        caplog.set_level(logging.DEBUG, logger=name)
    fake_anthropic.enqueue(
        overloaded(),
        text_reply("ok"),
        rate_limited(retry_after=120),
        # A misbehaving server echoing the key must not smuggle it into our error.
        error_reply(401, "authentication_error", f"invalid x-api-key: {FAKE_ANTHROPIC_API_KEY}"),
        *[slow(text_reply("late"), 2.0)] * 5,
    )
    errors: list[LLMError] = []
    await call_llm(task="t", user="hi")
    for kwargs in ({}, {}, {"timeout": 0.1}):
        with pytest.raises(LLMError) as info:
            await call_llm(task="t", user="hi", **kwargs)
        errors.append(info.value)

    sent = fake_anthropic.requests[0].headers
    # anthropic 2.x sends the key as a bearer token; older versions used x-api-key.
    assert FAKE_ANTHROPIC_API_KEY in (sent.get("x-api-key"), sent.get("authorization", "")[7:])
    assert any(r.name.startswith("anthropic") for r in caplog.records)  # SDK debug logs captured
    assert any(
        r.name.startswith("httpcore2") or r.name.startswith("httpx2") for r in caplog.records
    )
    assert FAKE_ANTHROPIC_API_KEY not in caplog.text
    for record in caplog.records:
        assert FAKE_ANTHROPIC_API_KEY not in record.getMessage()
    for err in errors:
        assert FAKE_ANTHROPIC_API_KEY not in str(err)
        assert FAKE_ANTHROPIC_API_KEY not in repr(err)
        assert FAKE_ANTHROPIC_API_KEY not in repr(getattr(err, "body", None))
    assert "***" in str(errors[1])  # the echoed key was scrubbed
    runtime = get_runtime()
    assert FAKE_ANTHROPIC_API_KEY not in repr(runtime)
    for record in runtime.sink.records:  # type: ignore[union-attr]
        assert FAKE_ANTHROPIC_API_KEY not in record.model_dump_json()
