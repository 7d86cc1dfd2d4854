"""The contract between the runner and a suite: what a suite gets and what it returns.

A suite is a module in `evals.suites` with:
- `NAME`: its name (also its data folder `evals/<NAME>/`),
- `SERVICE`: the module it evaluates (the suite is skipped when that is not installed),
- `PROMPT_MODULES`: the prompt modules whose PROMPT_VERSION the run records,
- `METRICS`: the metrics it reports (`MetricSpec`), every one of them on every run,
- `async def run(ctx: SuiteContext) -> SuiteOutcome`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from evals.golden import share
from evals.llm import EvalLlm
from evals.models import Better, CaseFailure


@dataclass(frozen=True)
class MetricSpec:
    """A metric a suite reports: its name, which direction is better, what it measures."""

    name: str
    better: Better | None
    description: str


@dataclass(frozen=True)
class SuiteContext:
    """What a suite runs with."""

    llm: EvalLlm
    data_dir: Path
    workdir: Path
    limit: int | None = None
    seed: int = 0

    @property
    def provider(self) -> str:
        """offline or anthropic: selects per-provider expectations."""
        return self.llm.provider


@dataclass
class SuiteOutcome:
    """A suite's measurements before thresholds are applied."""

    metrics: dict[str, float | None]
    cases: int
    failures: list[CaseFailure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def fail(self, case: str, reasons: list[str]) -> None:
        """Record a case that missed expectations (no-op without reasons)."""
        if reasons:
            self.failures.append(CaseFailure(case=case, reasons=reasons))


@dataclass
class Tally:
    """Hits and checks per metric, for the metrics that are shares of checks."""

    counts: dict[str, list[int]] = field(default_factory=dict)

    def add(self, name: str, hit: bool) -> bool:
        """Count one check of a metric; returns the hit."""
        pair = self.counts.setdefault(name, [0, 0])
        pair[0] += hit
        pair[1] += 1
        return hit

    def rate(self, name: str) -> float | None:
        """The share of a metric's checks that hit (None without checks)."""
        hits, total = self.counts.get(name, [0, 0])
        return share(hits, total)
