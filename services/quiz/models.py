"""The `emit_quiz_questions` tool: its pydantic model is the schema sent and the validator."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from shared.llm import Tool

TOOL_NAME = "emit_quiz_questions"
OPTION_COUNT = 4
MIN_EXPLANATION_CHARS = 20
MAX_BATCH = 20

Difficulty = Literal["easy", "medium", "hard"]
DIFFICULTIES: tuple[Difficulty, ...] = ("easy", "medium", "hard")
Option = Annotated[str, Field(min_length=1, max_length=300)]


class GeneratedQuestion(BaseModel):
    """One multiple-choice question as the model emits it."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=5, max_length=500, description="The question, in Dutch.")
    options: list[Option] = Field(
        min_length=OPTION_COUNT,
        max_length=OPTION_COUNT,
        description="Exactly four distinct answer options; one is correct.",
    )
    correct_index: int = Field(ge=0, le=OPTION_COUNT - 1, description="0-based correct option.")
    explanation: str = Field(
        max_length=1000,
        description=f"Why the correct option is right (at least {MIN_EXPLANATION_CHARS} chars).",
    )
    difficulty: Difficulty = Field(description="easy, medium or hard.")


class QuizQuestionsInput(BaseModel):
    """The tool input: a batch of questions about one topic."""

    model_config = ConfigDict(extra="forbid")

    questions: list[GeneratedQuestion] = Field(min_length=1, max_length=MAX_BATCH)


def quiz_tool() -> Tool:
    """The forced tool every generation call uses."""
    return Tool(
        name=TOOL_NAME,
        description=(
            "Save multiple-choice quiz questions about the topic: each with exactly four "
            "distinct options, the index of the correct one, an explanation and a difficulty."
        ),
        model=QuizQuestionsInput,
    )
