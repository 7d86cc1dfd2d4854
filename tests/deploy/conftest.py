"""What the deploy checks compare against: the repo's deploy/ files and the real metric names."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import promql_parser
import yaml
from prometheus_client import CollectorRegistry

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
DATA = Path(__file__).parent / "data"
SCHEMAS = Path(__file__).parent / "schemas"
K8S_VERSION = "1.33"
SUFFIXES = ("", "_total", "_bucket", "_count", "_sum", "_created")


def load_docs(path: Path) -> list[dict[str, Any]]:
    """Every YAML document in a file (empty ones skipped)."""
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def schema_errors(schema_file: str, doc: Any, definition: str | None = None) -> list[str]:
    """Every violation of a vendored JSON schema (or one of its definitions), as `path: message`."""
    schema = json.loads((SCHEMAS / schema_file).read_text())
    if definition is not None:  # the panel schemas only define types: point at the one we need
        schema = {**schema, "$ref": f"#/definitions/{definition}"}
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    return [_describe(e) for e in validator.iter_errors(doc)]


def _describe(error: jsonschema.ValidationError) -> str:
    """`path: message`; for oneOf/anyOf, why the alternative that came closest failed."""
    while error.context:
        alternatives: dict[Any, list[jsonschema.ValidationError]] = {}
        for sub in error.context:
            alternatives.setdefault(sub.relative_schema_path[0], []).append(sub)
        error = min(alternatives.values(), key=len)[0]
    return f"{'/'.join(map(str, error.absolute_path)) or '(root)'}: {error.message}"


def exported_metric_names() -> set[str]:
    """Every sample name our processes can export: R42's families and FastStream's."""
    from faststream.nats.prometheus import NatsPrometheusMiddleware

    from shared.obs.metrics import ObsMetrics

    registry = CollectorRegistry()
    ObsMetrics("probe", registry)
    NatsPrometheusMiddleware(registry=registry, app_name="probe")
    names: set[str] = {"up"}  # Prometheus adds it per target
    for family in registry.collect():
        names.update(family.name + s for s in SUFFIXES)
    return names


GRAFANA_INTERVALS = re.compile(r"\$\{?(__rate_interval|__interval|__range)\b\}?")
"""Grafana's built-in range variables, which it replaces by a duration before querying."""


def parse_promql(expr: str) -> promql_parser.Expr:
    """Parse PromQL (Grafana's range variables read as 5m); fail with the parser's reason."""
    try:
        return promql_parser.parse(GRAFANA_INTERVALS.sub("5m", expr))
    except ValueError as exc:
        raise AssertionError(f"not PromQL: {exc} in {expr!r}") from exc


def referenced_metrics(expr: str) -> set[str]:
    """The metric names an expression selects (by name or by a `__name__` equality matcher)."""
    names: set[str] = set()

    def visit(node: promql_parser.Expr) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            if node.name:
                names.add(node.name)
            for m in node.matchers.matchers:
                if m.name == "__name__" and m.op == promql_parser.MatchOp.Equal:
                    names.add(m.value)

    promql_parser.walk(parse_promql(expr), visit)
    return names
