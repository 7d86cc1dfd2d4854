"""The offline provider: deterministic, schema-valid, visibly offline, same validation path."""

from __future__ import annotations

import re
from datetime import date

import pytest
from pydantic import BaseModel, Field

from shared.llm import (
    OFFLINE_PREFIX,
    LLMOutputError,
    LLMRuntime,
    LLMValidationError,
    OfflinePlans,
    OfflineProvider,
    OfflineRequest,
    OfflineStep,
    Tool,
    call_llm,
)
from tests.shared.llm.support import KEBAB, Answer, Extraction, Quiz, RecordingLimiter

CHUNK = (
    "# Onboarding\nEvery new hire gets a buddy for the first two weeks.\n"
    "## Payroll\nSalaries are paid on the 25th of every month.\n"
    "## Feedback\nWe give feedback openly, in the team channel."
)


class Node(BaseModel):
    """A recursive model with optional and dated fields."""

    name: str
    created: date
    weight: float = Field(gt=0, lt=1)
    tags: set[str] = Field(default_factory=set, max_length=2)
    children: list[Node] = Field(default_factory=list, max_length=2)
    parent: Node | None = None


@pytest.mark.parametrize("model", [Extraction, Quiz, Node, Answer])
async def test_tool_output_is_schema_valid_and_deterministic(
    offline_llm: LLMRuntime, model: type[BaseModel]
) -> None:
    tool = Tool("produce", "Produce the structure", model)
    first = await call_llm(task="t", user=CHUNK, tools=[tool], tool_choice="produce")
    again = await call_llm(task="t", user=CHUNK, tools=[tool], tool_choice="produce")
    (use,) = first.tool_uses
    assert isinstance(use.parsed, model)  # validated on the same path as Anthropic replies
    assert use.input == again.tool_uses[0].input
    assert (first.model, first.provider, first.cost_usd) == ("offline", "offline", 0.0)
    assert first.stop_reason == "tool_use" and first.offline


async def test_tool_output_respects_constraints_and_uses_the_request_text(
    offline_llm: LLMRuntime,
) -> None:
    tool = Tool("save_extraction", "Save topics", Extraction)
    result = await call_llm(task="t", user=CHUNK, tools=[tool], tool_choice="any")
    parsed: Extraction = result.tool_uses[0].parsed  # type: ignore[assignment]
    assert 1 <= len(parsed.topics) <= 4
    assert all(re.match(KEBAB, t.id) for t in parsed.topics)
    assert parsed.topics[0].id == "onboarding"  # first heading → first topic
    assert any("buddy" in t.summary for t in parsed.topics)
    quiz_tool = Tool("make_quiz", "Make a quiz", Quiz)
    quiz = await call_llm(task="t", user=CHUNK, tools=[quiz_tool], tool_choice="make_quiz")
    questions = quiz.tool_uses[0].parsed.questions  # type: ignore[attr-defined]
    assert all(len(q.options) == 4 and 0 <= q.correct_index <= 3 for q in questions)


async def test_different_requests_give_different_output(offline_llm: LLMRuntime) -> None:
    tool = Tool("save_extraction", "Save topics", Extraction)
    a = await call_llm(task="t", user=CHUNK, tools=[tool], tool_choice="any")
    b = await call_llm(
        task="t", user="# Security\nLock your screen.", tools=[tool], tool_choice="any"
    )
    assert a.tool_uses[0].input != b.tool_uses[0].input
    assert b.tool_uses[0].parsed.topics[0].id == "security"  # type: ignore[attr-defined]


async def test_text_reply_is_marked_and_quotes_the_most_relevant_context(
    offline_llm: LLMRuntime,
) -> None:
    result = await call_llm(task="chat", system=CHUNK, user="When are salaries paid?")
    assert result.text.startswith(OFFLINE_PREFIX)
    assert "Salaries are paid on the 25th of every month." in result.text
    no_context = await call_llm(task="chat", user="Hello there. How are you?")
    assert no_context.text.startswith(OFFLINE_PREFIX) and "Hello there." in no_context.text


async def test_schema_text_request_is_parsed(offline_llm: LLMRuntime) -> None:
    result = await call_llm(task="t", user=CHUNK, schema=Extraction)
    assert result.text.startswith(OFFLINE_PREFIX)
    assert isinstance(result.parsed, Extraction)


async def test_registered_handler_derives_the_input(offline_llm: LLMRuntime) -> None:
    seen: list[OfflineRequest] = []

    def derive(request: OfflineRequest) -> Answer:
        seen.append(request)
        return Answer(answer=request.sentences()[0], confidence=0.5)

    offline_llm.provider = OfflineProvider(OfflinePlans(tools={"answer_it": derive}))
    tool = Tool("answer_it", "Answer", Answer)
    result = await call_llm(
        task="t", user="Payday is the 25th. Ask HR.", tools=[tool], tool_choice="answer_it"
    )
    assert result.tool_uses[0].parsed == Answer(answer="Payday is the 25th.", confidence=0.5)
    assert seen[0].tool is not None and seen[0].tool.name == "answer_it"


async def test_plans_belong_to_one_provider_not_the_process(offline_llm: LLMRuntime) -> None:
    offline_llm.provider = OfflineProvider(
        OfflinePlans(tools={"answer_it": lambda r: Answer(answer="planned", confidence=1.0)})
    )
    tool = Tool("answer_it", "Answer", Answer)
    planned = await call_llm(task="t", user="q?", tools=[tool], tool_choice="answer_it")
    offline_llm.provider = OfflineProvider()  # another service's runtime: no plans of ours
    filled = await call_llm(task="t", user="q?", tools=[tool], tool_choice="answer_it")
    assert planned.tool_uses[0].parsed.answer == "planned"  # type: ignore[union-attr]
    assert filled.tool_uses[0].parsed.answer != "planned"  # type: ignore[union-attr]


async def test_a_turn_plan_plays_the_models_free_choice(offline_llm: LLMRuntime) -> None:
    seen: list[str] = []

    def turn(request: OfflineRequest) -> OfflineStep:
        seen.append(request.tool_choice)
        if request.tool_choice == "auto" and len(request.messages) == 1:
            return OfflineStep(tool="answer_it")
        return OfflineStep(text="[offline] done")

    offline_llm.provider = OfflineProvider(
        OfflinePlans(tools={"answer_it": lambda r: Answer(answer="a", confidence=0.1)},
                     turns={"answer_it": turn})
    )  # fmt: skip
    tool = Tool("answer_it", "Answer", Answer)
    first = await call_llm(task="t", user="q?", tools=[tool], tool_choice="auto")
    assert [u.name for u in first.tool_uses] == ["answer_it"] and first.offline
    messages = [{"role": "user", "content": "q?"}, first.assistant_message(),
                {"role": "user", "content": [first.tool_uses[0].result("ok")]}]  # fmt: skip
    final = await call_llm(task="t", messages=messages, tools=[tool], tool_choice="auto")
    assert final.text == "[offline] done" and not final.tool_uses
    forced_text = await call_llm(task="t", user="q?", tools=[tool], tool_choice="none")
    assert forced_text.text == "[offline] done"  # `none` never yields a tool call
    assert seen == ["auto", "auto", "none"]


async def test_a_turn_plan_cannot_pick_a_tool_that_was_not_offered(
    offline_llm: LLMRuntime,
) -> None:
    offline_llm.provider = OfflineProvider(
        OfflinePlans(turns={"answer_it": lambda r: OfflineStep(tool="rm_rf")})
    )
    tool = Tool("answer_it", "Answer", Answer)
    with pytest.raises(LLMOutputError, match="unoffered tool"):
        await call_llm(task="t", user="q?", tools=[tool], tool_choice="auto")


async def test_invalid_handler_output_fails_validation(offline_llm: LLMRuntime) -> None:
    offline_llm.provider = OfflineProvider(
        OfflinePlans(tools={"answer_it": lambda request: {"answer": 3}})
    )
    with pytest.raises(LLMValidationError):
        tool = Tool("answer_it", "Answer", Answer)
        await call_llm(task="t", user="q", tools=[tool], tool_choice="answer_it")


async def test_offline_telemetry_and_no_limiter(offline_llm: LLMRuntime) -> None:
    limiter = RecordingLimiter()
    await call_llm(task="chat", tier="reasoning", user="hi", limiter=limiter)
    (record,) = offline_llm.sink.records  # type: ignore[union-attr]
    assert (record.provider, record.model, record.cost_usd, record.ok) == (
        "offline",
        "offline",
        0.0,
        True,
    )
    assert record.tier == "reasoning"
    assert limiter.calls == []  # nothing to rate-limit offline


async def test_unconfigured_call_without_a_key_is_offline() -> None:
    # No ANTHROPIC_API_KEY in the (isolated) environment → the offline provider.
    result = await call_llm(task="t", user="hi")
    assert result.provider == "offline" and result.text.startswith(OFFLINE_PREFIX)


async def test_text_reply_in_a_tool_loop_quotes_the_tool_result(offline_llm: LLMRuntime) -> None:
    messages = [
        {"role": "user", "content": "Where is the office?"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "lookup", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "The office is in Utrecht."}
            ],
        },
    ]
    result = await call_llm(task="chat", messages=messages)
    assert result.text == f'{OFFLINE_PREFIX}Most relevant context: "The office is in Utrecht."'
