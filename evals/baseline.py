"""The stored baseline (evals/results/baseline.json): metric values per provider and suite.

Each provider keeps its own entry, so an Anthropic run never overwrites the offline
baseline CI compares against. Updating merges the suites that ran into the entry.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evals.golden import EVALS_DIR
from evals.models import RESULTS_SCHEMA_VERSION, Better, RunResult
from shared.errors import BadInputError

RESULTS_DIR = EVALS_DIR / "results"
BASELINE_FILE = RESULTS_DIR / "baseline.json"
_EPS = 1e-9


@dataclass(frozen=True)
class Delta:
    """A metric's value next to its baseline."""

    value: float | None
    baseline: float | None

    @property
    def change(self) -> float | None:
        """value − baseline (None when either is missing)."""
        if self.value is None or self.baseline is None:
            return None
        return self.value - self.baseline

    def regressed(self, better: Better | None) -> bool:
        """Whether the value moved in the bad direction."""
        change = self.change
        if change is None or better is None:
            return False
        return change < -_EPS if better == "higher" else change > _EPS


def load_baseline(path: Path = BASELINE_FILE) -> dict[str, Any]:
    """The baseline document (empty when the file does not exist yet)."""
    if not path.exists():
        return {"schema_version": RESULTS_SCHEMA_VERSION, "providers": {}}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BadInputError(f"{path}: not a readable baseline ({exc})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("providers"), dict):
        raise BadInputError(f"{path}: expected {{'providers': {{provider: {{'suites': …}}}}}}")
    return doc


def baseline_for(doc: dict[str, Any], provider: str) -> dict[str, Any]:
    """The provider's entry ({} when there is none)."""
    entry = doc.get("providers", {}).get(provider)
    return entry if isinstance(entry, dict) else {}


def deltas(run: RunResult, entry: dict[str, Any]) -> dict[str, dict[str, Delta]]:
    """Suite → metric → value and baseline value."""
    stored_suites = entry.get("suites")
    suites = stored_suites if isinstance(stored_suites, dict) else {}
    out: dict[str, dict[str, Delta]] = {}
    for suite, result in run.suites.items():
        stored = (suites.get(suite) or {}).get("metrics") or {}
        out[suite] = {
            name: Delta(
                value=metric.value,
                baseline=stored.get(name) if isinstance(stored.get(name), int | float) else None,
            )
            for name, metric in result.metrics.items()
        }
    return out


def updated_baseline(doc: dict[str, Any], run: RunResult) -> dict[str, Any]:
    """The baseline with this run's suites (those that produced metrics) merged in."""
    providers = dict(doc.get("providers") or {})
    entry = dict(baseline_for(doc, run.provider))
    suites = dict(entry.get("suites") or {})
    for name, result in run.suites.items():
        if result.status in ("passed", "failed"):
            suites[name] = {
                "prompt_versions": result.prompt_versions,
                "metrics": {m: metric.value for m, metric in result.metrics.items()},
            }
    entry.update(
        run_id=run.run_id,
        updated_at=datetime.now(UTC).isoformat(),
        models=run.models,
        suites=dict(sorted(suites.items())),
    )
    providers[run.provider] = entry
    return {"schema_version": RESULTS_SCHEMA_VERSION, "providers": dict(sorted(providers.items()))}


def write_json(path: Path, data: Any) -> None:
    """Write JSON via a temp file and rename, so a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, 0o644)  # mkstemp makes it private; results are plain project files
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, indent=2)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
