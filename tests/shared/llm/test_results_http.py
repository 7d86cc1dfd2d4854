"""Results through the real SDK: tool uses, schema text, validation, tool loops, pass-through."""

from __future__ import annotations

import logging

import pytest

from shared.llm import (
    LLMOutputError,
    LLMRuntime,
    LLMValidationError,
    Tool,
    call_llm,
)
from shared.llm.caching import estimate_tokens, min_cacheable_tokens
from tests.fakes.anthropic_server import FakeAnthropic, text_reply, tool_reply
from tests.shared.llm.support import Answer, Extraction

EXTRACT = Tool("save_extraction", "Save topics and relations found in the chunk", Extraction)
VALID_EXTRACTION = {
    "topics": [
        {
            "id": "onboarding",
            "label": "Onboarding",
            "kind": "process",
            "summary": "How new hires start.",
        }
    ],
    "relations": [],
}


async def test_forced_tool_returns_validated_tool_use(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(tool_reply("save_extraction", VALID_EXTRACTION, tool_id="toolu_1"))
    result = await call_llm(
        task="extract", tier="fast", user="chunk", tools=[EXTRACT], tool_choice="save_extraction"
    )
    (use,) = result.tool_uses
    assert (use.id, use.name, use.input) == ("toolu_1", "save_extraction", VALID_EXTRACTION)
    assert isinstance(use.parsed, Extraction) and use.parsed.topics[0].id == "onboarding"
    assert result.stop_reason == "tool_use" and result.request_id.startswith("req_fake_")
    body = fake_anthropic.requests[0].body
    assert body["model"] == fake_llm.settings.model_fast
    assert body["tools"][0]["input_schema"] == Extraction.model_json_schema()
    assert body["tool_choice"] == {"type": "tool", "name": "save_extraction"}
    assert "temperature" not in body


async def test_tool_input_of_the_wrong_type_is_a_validation_error(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    bad = {"topics": "onboarding, payroll"}  # a string where a list of objects belongs
    fake_anthropic.enqueue(tool_reply("save_extraction", bad))
    with pytest.raises(LLMValidationError, match="save_extraction") as info:
        await call_llm(task="t", user="chunk", tools=[EXTRACT], tool_choice="save_extraction")
    assert info.value.transient is False
    assert len(fake_anthropic.requests) == 1


async def test_a_call_to_an_unknown_tool_is_a_validation_error(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(tool_reply("drop_database", {}))
    with pytest.raises(LLMValidationError, match="unknown tool 'drop_database'"):
        await call_llm(task="t", user="chunk", tools=[EXTRACT], tool_choice="any")


async def test_forced_tool_answered_with_text_is_an_output_error(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(text_reply("I'd rather not."))
    with pytest.raises(LLMOutputError, match="did not call the required tool"):
        await call_llm(task="t", user="chunk", tools=[EXTRACT], tool_choice="save_extraction")


async def test_fenced_json_followed_by_prose_is_parsed(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(
        text_reply(
            'Here it is:\n```json\n{"answer": "42", "confidence": 0.8}\n```\nAnything {else}?'
        )
    )
    result = await call_llm(task="t", user="q", schema=Answer)
    assert result.parsed == Answer(answer="42", confidence=0.8)


async def test_schema_text_without_json_is_an_output_error(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(text_reply("No idea, sorry."))
    with pytest.raises(LLMOutputError):
        await call_llm(task="t", user="q", schema=Answer)


async def test_tool_loop_round_trip(fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime) -> None:
    lookup = Tool("lookup_topic", "Look a topic up", Answer)
    fake_anthropic.enqueue(
        tool_reply(
            "lookup_topic",
            {"answer": "payroll", "confidence": 1},
            tool_id="toolu_9",
            text="Let me check.",
        ),
        text_reply("Salaries are paid monthly."),
    )
    messages: list[dict] = [{"role": "user", "content": "When is payday?"}]
    first = await call_llm(task="chat", messages=messages, tools=[lookup])
    assert first.text == "Let me check." and first.tool_uses[0].parsed.answer == "payroll"
    messages.append(first.assistant_message())
    messages.append({"role": "user", "content": [first.tool_uses[0].result("Paid on the 25th.")]})
    second = await call_llm(task="chat", messages=messages, tools=[lookup])
    assert second.text == "Salaries are paid monthly."
    sent = fake_anthropic.requests[1].body["messages"]
    assert sent[1] == {"role": "assistant", "content": first.content}
    assert sent[2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_9",
        "content": "Paid on the 25th.",
    }


async def test_a_cache_mark_below_the_model_minimum_is_dropped_with_one_warning(
    fake_anthropic: FakeAnthropic,
    fake_llm: LLMRuntime,
    caplog: pytest.LogCaptureFixture,
    unique: str,
) -> None:
    caplog.set_level(logging.INFO, logger="shared.llm")
    system = [
        {"type": "text", "text": "You are R42."},
        {"type": "text", "text": "KB: ...", "cache_control": {"type": "ephemeral"}},
    ]
    await call_llm(task=f"chat-{unique}", system=system, user="hello")
    await call_llm(task=f"chat-{unique}", system=system, user="hello again")
    sent = fake_anthropic.requests[0].body["system"]
    assert sent == [{"type": "text", "text": "You are R42."}, {"type": "text", "text": "KB: ..."}]
    assert system[1]["cache_control"] == {"type": "ephemeral"}  # the caller's copy is intact
    warnings = [r for r in caplog.records if "marks a prefix of" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    assert f"chat-{unique}" in warnings[0].getMessage() and "short of" in warnings[0].getMessage()


async def test_a_cache_mark_above_the_model_minimum_is_sent(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime, unique: str
) -> None:
    minimum = min_cacheable_tokens(fake_llm.settings.model_standard)
    big = "Onderwerpen: pensioen, verlof en declaraties. " * (minimum // 8)
    system = [
        {"type": "text", "text": "You are R42."},
        {"type": "text", "text": big, "cache_control": {"type": "ephemeral"}},
    ]
    fake_anthropic.enqueue(
        text_reply("hi", usage={"cache_creation_input_tokens": 1500, "cache_read_input_tokens": 0})
    )
    result = await call_llm(task=f"chat-{unique}", system=system, user="hello")
    assert fake_anthropic.requests[0].body["system"] == system
    assert estimate_tokens(big) >= minimum
    assert result.usage.cache_creation_input_tokens == 1500


def test_minimum_cacheable_prefix_per_model() -> None:
    assert min_cacheable_tokens("claude-haiku-4-5-20251001") == 4096
    assert min_cacheable_tokens("claude-opus-4-5") == 4096
    assert min_cacheable_tokens("claude-sonnet-4-5-20250929") == 1024
    assert min_cacheable_tokens("claude-opus-4-1") == 1024
    assert min_cacheable_tokens("claude-3-5-haiku-20241022") == 2048
    assert min_cacheable_tokens("some-new-model") == 4096  # unknown: the strictest


async def test_plain_string_system_is_sent_as_is_without_invented_caching(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    await call_llm(task="chat", system="Be brief.", user="hello")
    body = fake_anthropic.requests[0].body
    assert body["system"] == "Be brief."
    assert "cache_control" not in body


async def test_plain_text_max_tokens_is_returned_not_raised(
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(text_reply("A long story that stops mid", stop_reason="max_tokens"))
    result = await call_llm(task="t", user="tell me a story", max_tokens=10)
    assert result.stop_reason == "max_tokens" and result.text.endswith("mid")
