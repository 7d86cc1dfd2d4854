"""The installed metrics recorder (a light module: rpc hooks import it on every path).

Scoped like the LLM runtime: the service host starts each service in its own context, so
services sharing a process (tests, scenario stacks) record into their own registries.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shared.obs.metrics import ObsMetrics

_process: ObsMetrics | None = None
_scoped: ContextVar[ObsMetrics | None] = ContextVar("r42_obs_metrics", default=None)


def install_metrics(metrics: ObsMetrics) -> None:
    """Make `metrics` the recorder of this context (and of the process, as a fallback)."""
    global _process
    _process = metrics
    _scoped.set(metrics)


def uninstall_metrics(metrics: ObsMetrics) -> None:
    """Stop recording into `metrics` (a recorder another service installed stays)."""
    global _process
    if _process is metrics:
        _process = None
    if _scoped.get() is metrics:
        _scoped.set(None)


def current_metrics() -> ObsMetrics | None:
    """The recorder of this context, else the process's, else None (no metrics served)."""
    return _scoped.get() or _process
