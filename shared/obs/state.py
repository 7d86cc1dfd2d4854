"""The process's installed metrics recorder (a light module: rpc hooks import it on every path)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shared.obs.metrics import ObsMetrics

_current: ObsMetrics | None = None


def install_metrics(metrics: ObsMetrics | None) -> None:
    """Make `metrics` the process's recorder (None turns recording off)."""
    global _current
    _current = metrics


def current_metrics() -> ObsMetrics | None:
    """The installed recorder, or None when this process does not serve metrics."""
    return _current
