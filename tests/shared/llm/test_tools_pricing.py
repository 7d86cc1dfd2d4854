"""Tool schemas from pydantic models, tool_choice handling, and the price table."""

from __future__ import annotations

import pytest

from shared.errors import BadInputError
from shared.llm import LLMInputError, Tool, cost_usd, price_for
from shared.llm.tools import forces_tool, normalize_tool_choice
from tests.shared.llm.support import Extraction, Topic


def test_input_schema_is_generated_from_the_model() -> None:
    tool = Tool("save_topics", "Save the extracted topics", Extraction)
    param = tool.to_param()
    assert param["input_schema"] == Extraction.model_json_schema()
    assert param["input_schema"]["required"] == ["topics"]
    assert tool.input_schema is Tool("other", "d", Extraction).input_schema  # cached per model


def test_tool_cache_control_is_passed_through() -> None:
    tool = Tool("t", "d", Topic, cache_control={"type": "ephemeral"})
    assert tool.to_param()["cache_control"] == {"type": "ephemeral"}


@pytest.mark.parametrize(
    ("name", "description", "model"),
    [("bad name", "d", Topic), ("", "d", Topic), ("t", " ", Topic), ("t", "d", dict)],
)
def test_invalid_tools_are_rejected(name: str, description: str, model: type) -> None:
    with pytest.raises(LLMInputError):
        Tool(name, description, model)


def test_tool_choice_forms() -> None:
    tools = [Tool("a", "d", Topic), Tool("b", "d", Topic)]
    assert normalize_tool_choice(None, tools) is None
    assert normalize_tool_choice("a", tools) == {"type": "tool", "name": "a"}
    assert normalize_tool_choice(tools[1], tools) == {"type": "tool", "name": "b"}
    assert normalize_tool_choice("auto", tools) == {"type": "auto"}
    assert forces_tool(normalize_tool_choice("any", tools))
    assert not forces_tool(normalize_tool_choice("auto", tools))


def test_tool_choice_naming_an_unknown_tool_is_bad_input() -> None:
    with pytest.raises(BadInputError, match="unknown tool 'c'"):
        normalize_tool_choice("c", [Tool("a", "d", Topic)])


def test_input_errors_are_permanent_bad_input() -> None:
    err = LLMInputError("x")
    assert isinstance(err, BadInputError) and err.transient is False


@pytest.mark.parametrize(
    ("model", "prices"),
    [
        ("claude-haiku-4-5", (1.0, 5.0)),
        ("claude-haiku-4-5-20251001", (1.0, 5.0)),
        ("claude-sonnet-4-5", (3.0, 15.0)),
        ("claude-sonnet-4-20250514", (3.0, 15.0)),
        ("claude-opus-4-5", (5.0, 25.0)),
        ("claude-opus-4-6", (5.0, 25.0)),
        ("claude-opus-4-1", (15.0, 75.0)),
        ("claude-3-5-haiku-20241022", (0.8, 4.0)),
        ("offline", (0.0, 0.0)),
    ],
)
def test_price_table(model: str, prices: tuple[float, float]) -> None:
    price = price_for(model)
    assert (price.input, price.output) == prices


def test_cost_includes_cache_writes_and_reads() -> None:
    cost = cost_usd(
        "claude-sonnet-4-5",
        input_tokens=1_000,
        output_tokens=2_000,
        cache_creation_input_tokens=4_000,
        cache_read_input_tokens=10_000,
    )
    # 1000·3 + 4000·3·1.25 + 10000·3·0.1 + 2000·15 = 3000 + 15000 + 3000 + 30000 µ$
    assert cost == pytest.approx(0.051)
