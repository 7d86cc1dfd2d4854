"""Observability: Prometheus metrics, OpenTelemetry traces, health endpoints, status files.

Names resolve on first use: the rpc hooks import `shared.obs.rpc` on every process, and that
must not pull in aiohttp, the SDK or the LLM library.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shared.obs.host import Observability, prepare_obs
    from shared.obs.metrics import ObsMetrics
    from shared.obs.settings import ObsSettings
    from shared.obs.state import current_metrics
    from shared.obs.status import ServiceStatus, read_statuses, status_path

_WHERE = {
    "Observability": "shared.obs.host",
    "prepare_obs": "shared.obs.host",
    "ObsMetrics": "shared.obs.metrics",
    "ObsSettings": "shared.obs.settings",
    "current_metrics": "shared.obs.state",
    "ServiceStatus": "shared.obs.status",
    "read_statuses": "shared.obs.status",
    "status_path": "shared.obs.status",
}

__all__ = [
    "ObsMetrics",
    "ObsSettings",
    "Observability",
    "ServiceStatus",
    "current_metrics",
    "prepare_obs",
    "read_statuses",
    "status_path",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'shared.obs' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
