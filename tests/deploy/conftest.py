"""What the deploy checks compare against: the repo's deploy/ files and the real metric names."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from prometheus_client import CollectorRegistry

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
DATA = Path(__file__).parent / "data"
K8S_VERSION = "1.33"
SUFFIXES = ("", "_total", "_bucket", "_count", "_sum", "_created")


def load_docs(path: Path) -> list[dict]:
    """Every YAML document in a file (empty ones skipped)."""
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


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


_IDENT = re.compile(r"\b((?:r42|faststream)_[a-z0-9_]+|up)\b")


def referenced_metrics(expr: str) -> set[str]:
    """Metric-looking names in a PromQL expression (R42's and FastStream's prefixes, `up`)."""
    return set(_IDENT.findall(expr))


def check_promql_shape(expr: str) -> None:
    """What we can check without a PromQL parser: brackets balance and nest, strings close."""
    pairs, stack, in_str = {")": "(", "]": "[", "}": "{"}, [], False
    prev = ""
    for ch in expr:
        if in_str:
            if ch == '"' and prev != "\\":
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "([{":
            stack.append(ch)
        elif ch in pairs:
            assert stack and stack.pop() == pairs[ch], f"unbalanced {ch!r} in {expr!r}"
        prev = ch
    assert not in_str and not stack, f"unclosed bracket or string in {expr!r}"
