"""Limiter configuration: per-model-class budgets (defaults: Anthropic tier 1) and tuning."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from shared.llm.limiter_gcra import Rate
from shared.llm.limiting import ModelClass

PositiveFinite = Annotated[float, Field(gt=0, allow_inf_nan=False)]


class Budget(BaseModel):
    """One per-minute budget and how much of it may be spent at once when idle."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    per_minute: PositiveFinite
    burst: PositiveFinite | None = Field(
        default=None, description="units admitted at once when idle; default: one minute's worth"
    )

    def rate(self) -> Rate:
        """The GCRA rate for this budget."""
        burst = self.burst if self.burst is not None else self.per_minute
        return Rate(per_second=self.per_minute / 60.0, burst=burst)


class ClassLimits(BaseModel):
    """The three budgets Anthropic enforces per model class."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    requests: Budget
    input_tokens: Budget
    output_tokens: Budget

    def rates(self) -> tuple[Rate, Rate, Rate]:
        """Rates in the order the GCRA state stores them (requests, input, output)."""
        return (self.requests.rate(), self.input_tokens.rate(), self.output_tokens.rate())


def tier1_limits(*, rpm: float, itpm: float, otpm: float) -> ClassLimits:
    """Limits shaped like Anthropic's: requests barely burst, tokens get a minute's worth."""
    # Anthropic may enforce a per-minute limit over shorter intervals (60 RPM as one
    # request per second), so a burst of requests draws 429s: allow two seconds' worth.
    # Token budgets get the whole minute, since a single request may need most of it.
    return ClassLimits(
        requests=Budget(per_minute=rpm, burst=max(1.0, rpm / 30)),
        input_tokens=Budget(per_minute=itpm),
        output_tokens=Budget(per_minute=otpm),
    )


def _default_classes() -> dict[ModelClass, ClassLimits]:
    sonnet = tier1_limits(rpm=50, itpm=30_000, otpm=8_000)
    return {
        "haiku": tier1_limits(rpm=50, itpm=50_000, otpm=10_000),
        "sonnet": sonnet,
        "opus": tier1_limits(rpm=50, itpm=30_000, otpm=8_000),
        "other": sonnet,
    }


class LimiterConfig(BaseModel):
    """Budgets per model class plus backend tuning; every process sharing a bucket must agree."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    classes: dict[ModelClass, ClassLimits] = Field(default_factory=_default_classes)
    max_pause_s: PositiveFinite = Field(
        default=300.0, description="longest shared pause honoured; a bogus retry-after is capped"
    )
    kv_timeout_s: PositiveFinite = Field(
        default=1.0, description="a KV operation slower than this switches to the local fallback"
    )
    connect_timeout_s: PositiveFinite = 2.0
    retry_nats_after_s: PositiveFinite = Field(
        default=30.0, description="how long the local fallback runs before NATS is tried again"
    )
    max_cas_attempts: int = Field(default=64, ge=1, le=10_000)
    book_ahead_s: float = Field(
        default=2.0,
        ge=0,
        allow_inf_nan=False,
        description="slots closer than this are booked at once; further ones are waited for",
    )

    @model_validator(mode="before")
    @classmethod
    def _fill_missing_classes(cls, data: object) -> object:
        # A partial `classes` mapping overrides only the classes it names.
        if isinstance(data, dict) and isinstance(data.get("classes"), dict):
            merged: dict[str, object] = {cls: limits for cls, limits in _default_classes().items()}
            merged.update(data["classes"])
            data = {**data, "classes": merged}
        return data

    def limits_for(self, cls: ModelClass) -> ClassLimits:
        """The limits of one model class."""
        return self.classes[cls]
