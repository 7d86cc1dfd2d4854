"""Reading golden sets and thresholds from evals/<suite>/, with clear errors for bad files."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from evals.models import Threshold
from shared.errors import BadInputError
from shared.kb import fold_text
from shared.store import describe_validation

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")

EVALS_DIR = Path(__file__).resolve().parent
THRESHOLDS_FILE = "thresholds.yaml"
PROVIDERS = ("offline", "anthropic")


class Strict(BaseModel):
    """Base of golden-set models: an unknown key is a typo, rejected with its location."""

    model_config = ConfigDict(extra="forbid")


# A golden expectation: one value, or a list of acceptable alternatives (any one matches).
OneOf = str | list[str]


def suite_dir(suite: str, *, root: Path = EVALS_DIR) -> Path:
    """Where a suite's golden set and thresholds live."""
    return root / suite


def read_yaml(path: Path) -> Any:
    """A YAML document, or BadInputError naming the file and the problem."""
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise BadInputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path}: cannot read it ({exc})") from None
    except yaml.YAMLError as exc:
        raise BadInputError(f"{path}: invalid YAML: {exc}") from None


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file (blank lines skipped)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise BadInputError(f"{path}: no such file") from None
    rows = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BadInputError(f"{path}:{number}: invalid JSON: {exc.msg}") from None
        if not isinstance(row, dict):
            raise BadInputError(f"{path}:{number}: expected a JSON object")
        rows.append(row)
    return rows


def parse_model[M: BaseModel](model: type[M], data: Any, *, where: str) -> M:
    """Validate golden data against its model; BadInputError says where and what."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise BadInputError(f"{where}: {describe_validation(exc)}") from None


def load_thresholds(path: Path, *, provider: str) -> dict[str, Threshold]:
    """The thresholds for a provider: the `default` block with the provider's block over it."""
    data = read_yaml(path) or {}
    if not isinstance(data, dict):
        raise BadInputError(f"{path}: expected a mapping of provider → metric thresholds")
    unknown = set(data) - {"default", *PROVIDERS}
    if unknown:
        raise BadInputError(
            f"{path}: unknown block(s) {sorted(unknown)}; use default, {', '.join(PROVIDERS)}"
        )
    merged: dict[str, Threshold] = {}
    for block in ("default", provider):
        entries = data.get(block) or {}
        if not isinstance(entries, dict):
            raise BadInputError(f"{path}: block {block!r} must map metric names to thresholds")
        for metric, spec in entries.items():
            merged[str(metric)] = parse_model(Threshold, spec, where=f"{path} [{block}.{metric}]")
    return merged


def alternatives(expected: OneOf) -> list[str]:
    """The acceptable values of one expectation."""
    return [expected] if isinstance(expected, str) else list(expected)


def describe_one_of(expected: OneOf) -> str:
    """`x` or `x | y` for messages."""
    return " | ".join(alternatives(expected))


def met(expected: OneOf, found: Iterable[str]) -> bool:
    """Whether any alternative of the expectation is among the found values."""
    values = set(found)
    return any(option in values for option in alternatives(expected))


def text_contains(text: str, expected: OneOf) -> bool:
    """Whether the text contains any alternative (case- and accent-insensitive)."""
    folded = fold_text(text)
    return any(fold_text(option) in folded for option in alternatives(expected))


def share(hits: int, total: int) -> float | None:
    """hits / total, or None when there was nothing to count."""
    return hits / total if total else None


def limited[T](items: Sequence[T], limit: int | None) -> list[T]:
    """The first `limit` items (all when limit is None)."""
    return list(items if limit is None else items[:limit])


def with_override[M: BaseModel](base: M, override: BaseModel | None) -> M:
    """`base` with the fields the override block set (a provider's expectations)."""
    if override is None:
        return base
    return base.model_copy(update=override.model_dump(exclude_unset=True))
