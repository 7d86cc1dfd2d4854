"""Malformed calls are rejected with a clear BadInputError before any request is made."""

from __future__ import annotations

from typing import Any

import pytest

from shared.errors import BadInputError
from shared.llm import LLMInputError, LLMRuntime, Tool, call_llm
from tests.fakes.anthropic_server import FakeAnthropic
from tests.shared.llm.support import Answer

TOOL = Tool("answer", "Answer", Answer)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"task": "", "user": "hi"}, "task"),
        ({"task": "   ", "user": "hi"}, "task"),
        ({"task": None, "user": "hi"}, "task"),
        ({"task": "t", "tier": "turbo", "user": "hi"}, "unknown tier 'turbo'"),
        ({"task": "t"}, "needs messages"),
        ({"task": "t", "messages": []}, "needs messages"),
        ({"task": "t", "user": ""}, "user must be"),
        ({"task": "t", "user": "hi", "messages": [{"role": "user", "content": "x"}]}, "not both"),
        ({"task": "t", "messages": [{"role": "system", "content": "x"}]}, "role"),
        ({"task": "t", "messages": [{"role": "user", "content": ""}]}, "no content"),
        (
            {"task": "t", "user": "hi", "tools": [TOOL], "tool_choice": "nope"},
            "unknown tool 'nope'",
        ),
        ({"task": "t", "user": "hi", "tool_choice": "answer"}, "unknown tool|no tools"),
        ({"task": "t", "user": "hi", "tools": [TOOL, TOOL]}, "two tools"),
        ({"task": "t", "user": "hi", "tools": [{"name": "raw"}]}, "Tool instances"),
        ({"task": "t", "user": "hi", "max_tokens": 0}, "max_tokens"),
        ({"task": "t", "user": "hi", "timeout": 0}, "timeout"),
        ({"task": "t", "user": "hi", "system": [{"text": "no type"}]}, "system"),
        (
            {"task": "t", "user": "hi", "tools": [TOOL], "tool_choice": "answer", "schema": Answer},
            "contradicts",
        ),
    ],
)
async def test_bad_input_fails_before_any_request(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(LLMInputError, match=message) as info:
        await call_llm(**kwargs)
    assert isinstance(info.value, BadInputError) and not info.value.transient
    assert fake_anthropic.requests == []
    assert fake_llm.sink.records == []  # type: ignore[union-attr]
