"""Models and test doubles shared by the shared.llm tests."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from shared.llm import Permit, model_class

KEBAB = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"


class Answer(BaseModel):
    """A tiny structured answer."""

    answer: str
    confidence: float = Field(ge=0, le=1)


class Topic(BaseModel):
    """An extracted topic (kebab-case id, kind enum, bounded summary)."""

    id: str = Field(pattern=KEBAB, max_length=48)
    label: str = Field(min_length=2, max_length=60)
    kind: Literal["concept", "role", "process"]
    summary: str = Field(min_length=10, max_length=160)


class Relation(BaseModel):
    """A typed relation between two topic ids."""

    source: str = Field(pattern=KEBAB)
    target: str = Field(pattern=KEBAB)
    type: Literal["related_to", "depends_on", "part_of", "executed_by"]


class Extraction(BaseModel):
    """What the extractor's tool returns for one chunk."""

    topics: list[Topic] = Field(min_length=1, max_length=4)
    relations: list[Relation] = Field(default_factory=list, max_length=3)


class Question(BaseModel):
    """A multiple-choice question: exactly four options, an answer index, a difficulty."""

    prompt: str = Field(min_length=5)
    options: list[str] = Field(min_length=4, max_length=4)
    correct_index: int = Field(ge=0, le=3)
    difficulty: Literal["easy", "medium", "hard"]
    explanation: str | None = None


class Quiz(BaseModel):
    """A quiz with a bounded number of questions."""

    title: str = Field(max_length=80)
    questions: list[Question] = Field(min_length=2, max_length=5)
    published: bool


class RecordingLimiter:
    """A Limiter that admits everything and records the calls it received."""

    def __init__(self, *, fail: bool = False) -> None:
        self.calls: list[tuple[str, dict]] = []
        self.fail = fail

    async def acquire(self, *, model: str, input_tokens: int, output_tokens: int) -> Permit:
        """Record and admit (or fail, to test that limiter trouble never loses a call)."""
        self.calls.append(
            ("acquire", {"model": model, "input": input_tokens, "output": output_tokens})
        )
        if self.fail:
            raise RuntimeError("limiter backend down")
        return Permit(model_class(model), input_tokens, output_tokens)

    async def settle(self, permit: Permit, *, input_tokens: int, output_tokens: int) -> None:
        """Record the settlement."""
        self.calls.append(
            ("settle", {"permit": permit, "input": input_tokens, "output": output_tokens})
        )
        if self.fail:
            raise RuntimeError("limiter backend down")

    async def pause(self, *, model: str, until: float) -> None:
        """Record the pause."""
        self.calls.append(("pause", {"model": model, "until": until}))
        if self.fail:
            raise RuntimeError("limiter backend down")

    def kinds(self) -> list[str]:
        """The sequence of hook names called."""
        return [kind for kind, _ in self.calls]
