"""Tools whose `input_schema` is generated from a pydantic model: one source of truth."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from shared.llm.errors import LLMInputError

_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@lru_cache(maxsize=256)
def schema_for(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a model, generated once per model class."""
    return model.model_json_schema()


@dataclass(frozen=True)
class Tool:
    """A tool the model may call; its input is validated against `model`."""

    name: str
    description: str
    model: type[BaseModel]
    cache_control: dict[str, Any] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _NAME_RE.match(self.name):
            raise LLMInputError(
                f"tool name {self.name!r} must be 1-64 characters of letters, digits, _ or -"
            )
        if not isinstance(self.description, str) or not self.description.strip():
            raise LLMInputError(f"tool {self.name!r} needs a description")
        if not (isinstance(self.model, type) and issubclass(self.model, BaseModel)):
            raise LLMInputError(f"tool {self.name!r}: model must be a pydantic BaseModel class")

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON schema sent to the API (cached per model)."""
        return schema_for(self.model)

    def to_param(self) -> dict[str, Any]:
        """The tool definition as the Messages API expects it."""
        param: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }
        if self.cache_control is not None:
            param["cache_control"] = self.cache_control
        return param


@dataclass(frozen=True)
class ToolUse:
    """One validated `tool_use` block: `input` is the dict the model sent, `parsed` its model."""

    id: str
    name: str
    input: dict[str, Any]
    parsed: BaseModel

    def result(
        self, content: str | list[dict[str, Any]], *, is_error: bool = False
    ) -> dict[str, Any]:
        """A `tool_result` block answering this call, for the next user turn."""
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": self.id, "content": content}
        if is_error:
            block["is_error"] = True
        return block


def normalize_tool_choice(tool_choice: object, tools: list[Tool]) -> dict[str, Any] | None:
    """Turn None / "auto" / "any" / "none" / a tool name / a Tool / a dict into the API shape."""
    names = {tool.name for tool in tools}
    if tool_choice is None:
        return None
    if isinstance(tool_choice, Tool):
        tool_choice = tool_choice.name
    if isinstance(tool_choice, str):
        if tool_choice in ("auto", "any", "none"):
            choice: dict[str, Any] = {"type": tool_choice}
        else:
            choice = {"type": "tool", "name": tool_choice}
    elif isinstance(tool_choice, dict):
        choice = dict(tool_choice)
    else:
        raise LLMInputError(f"tool_choice must be a tool name, Tool or dict, not {tool_choice!r}")
    kind = choice.get("type")
    if kind not in ("auto", "any", "none", "tool"):
        raise LLMInputError(f"tool_choice type {kind!r} is not one of auto, any, none, tool")
    if kind != "none" and not tools:
        raise LLMInputError("tool_choice was given but no tools were")
    if kind == "tool" and choice.get("name") not in names:
        raise LLMInputError(
            f"tool_choice names unknown tool {choice.get('name')!r}; known: {sorted(names)}"
        )
    return choice


def forces_tool(choice: dict[str, Any] | None) -> bool:
    """Whether the choice obliges the model to call a tool (structured output)."""
    return choice is not None and choice.get("type") in ("tool", "any")
