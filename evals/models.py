"""What an eval run produces: metrics against thresholds, per suite, as JSON-ready models."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

Better = Literal["higher", "lower"]
SuiteStatus = Literal["passed", "failed", "error", "skipped"]
RESULTS_SCHEMA_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Threshold(_Model):
    """A bound a metric must respect: at least `min` or at most `max` (exactly one)."""

    min: float | None = None
    max: float | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Threshold:
        if (self.min is None) == (self.max is None):
            raise ValueError("a threshold needs exactly one of 'min' or 'max'")
        return self

    def allows(self, value: float) -> bool:
        """Whether the value is at or on the good side of the bound."""
        if self.min is not None:
            return value >= self.min - 1e-9
        return value <= (self.max or 0.0) + 1e-9

    def describe(self) -> str:
        """`≥ 0.9` or `≤ 0`."""
        return f"≥ {self.min:g}" if self.min is not None else f"≤ {self.max:g}"


class MetricResult(_Model):
    """One metric of a suite run: its value, bound and verdict (None value: no cases)."""

    value: float | None
    better: Better | None = None
    threshold: Threshold | None = None
    passed: bool | None = Field(default=None, description="None when there is no threshold")
    description: str = ""


class CaseFailure(_Model):
    """One golden case that did not meet every expectation, and why."""

    case: str
    reasons: list[str]


class LlmUsage(_Model):
    """The LLM calls a suite made, from the telemetry sink."""

    calls: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cost_usd: float = 0.0
    stop_reasons: dict[str, int] = Field(default_factory=dict)

    def plus(self, other: LlmUsage) -> LlmUsage:
        """The sum of two usages."""
        reasons = dict(self.stop_reasons)
        for key, count in other.stop_reasons.items():
            reasons[key] = reasons.get(key, 0) + count
        return LlmUsage(
            calls=self.calls + other.calls,
            failed=self.failed + other.failed,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
            cache_creation_input_tokens=(
                self.cache_creation_input_tokens + other.cache_creation_input_tokens
            ),
            cost_usd=round(self.cost_usd + other.cost_usd, 6),
            stop_reasons=reasons,
        )


class SuiteResult(_Model):
    """One suite of one run."""

    status: SuiteStatus
    error: str | None = None
    duration_s: float = 0.0
    cases: int = 0
    prompt_versions: dict[str, str] = Field(default_factory=dict)
    metrics: dict[str, MetricResult] = Field(default_factory=dict)
    llm: LlmUsage = Field(default_factory=LlmUsage)
    failures: list[CaseFailure] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    @property
    def failed_metrics(self) -> list[str]:
        """Names of metrics below their threshold."""
        return [name for name, metric in self.metrics.items() if metric.passed is False]


class RunResult(_Model):
    """A whole eval run: what ran against which provider, and every suite's result."""

    schema_version: int = RESULTS_SCHEMA_VERSION
    run_id: str
    started_at: str
    finished_at: str
    provider: str
    models: dict[str, str] = Field(default_factory=dict)
    limit: int | None = None
    seed: int = 0
    suites: dict[str, SuiteResult] = Field(default_factory=dict)
    llm: LlmUsage = Field(default_factory=LlmUsage)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """Whether no suite failed or errored (skipped suites do not fail a run)."""
        return all(s.status in ("passed", "skipped") for s in self.suites.values())
