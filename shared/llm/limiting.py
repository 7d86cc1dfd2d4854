"""The rate-limiter contract `call_llm` uses; implementations live in shared.llm.limiter."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, TypeGuard, get_args, runtime_checkable

ModelClass = Literal["haiku", "sonnet", "opus", "other"]
MODEL_CLASSES: frozenset[str] = frozenset(get_args(ModelClass))


def is_model_class(name: str) -> TypeGuard[ModelClass]:
    """Whether a name (e.g. from a KV key) is one of the model classes."""
    return name in MODEL_CLASSES


def model_class(model: str) -> ModelClass:
    """Map a model id to the class Anthropic rate-limits it under."""
    lowered = model.lower()
    for name in ("haiku", "sonnet", "opus"):
        if name in lowered:
            return name
    return "other"


@dataclass(frozen=True)
class Permit:
    """What was reserved for one request, so it can be corrected from the real usage."""

    model_class: ModelClass
    input_tokens: int
    output_tokens: int


@runtime_checkable
class Limiter(Protocol):
    """Admits LLM requests against shared per-minute budgets (requests, input, output tokens)."""

    async def acquire(self, *, model: str, input_tokens: int, output_tokens: int) -> Permit:
        """Wait until the request fits every budget (and any shared pause is over), then reserve."""
        ...

    async def settle(self, permit: Permit, *, input_tokens: int, output_tokens: int) -> None:
        """Correct the reservation from the response's real usage (refund or charge the gap)."""
        ...

    async def pause(self, *, model: str, until: float) -> None:
        """Announce a pause (epoch seconds, from a 429 retry-after) that every process honours."""
        ...


def paused_until(limiter: object, model: str) -> float:
    """The shared pause a limiter knows of for the model (epoch seconds; 0.0 when none).

    Optional on a Limiter: one without `paused_until` never reports a pause.
    """
    probe = getattr(limiter, "paused_until", None)
    if not callable(probe):
        return 0.0
    value = probe(model)
    return float(value) if isinstance(value, int | float) else 0.0
