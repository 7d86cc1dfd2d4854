"""Rate limiters for `call_llm`: shared GCRA budgets in NATS KV, or in-process.

Import from here (or from `shared.llm`); the `limiter_*` modules are implementation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from shared.errors import BadInputError
from shared.llm.limiter_base import LimiterContentionError, LimiterStats, LocalLimiter
from shared.llm.limiter_config import Budget, ClassLimits, LimiterConfig, tier1_limits
from shared.llm.limiter_gcra import Booking, Rate, Step, book, gcra_adjust, gcra_step
from shared.llm.limiter_kv import DEFAULT_BUCKET
from shared.llm.limiter_nats import NatsKvLimiter
from shared.llm.limiting import Limiter

__all__ = [
    "DEFAULT_BUCKET",
    "Booking",
    "Budget",
    "ClassLimits",
    "LimiterConfig",
    "LimiterContentionError",
    "LimiterStats",
    "LocalLimiter",
    "NatsKvLimiter",
    "Rate",
    "Step",
    "book",
    "gcra_adjust",
    "gcra_step",
    "open_limiter",
    "tier1_limits",
]


async def open_limiter(
    *,
    mode: Literal["nats", "local", "off"],
    nats_url: str | None = None,
    config: LimiterConfig | None = None,
    bucket: str = DEFAULT_BUCKET,
    connect_options: Mapping[str, Any] | None = None,
    replicas: int = 1,
) -> Limiter | None:
    """Build the limiter `Settings.limiter` asks for (None for "off"); close it with `aclose()`.

    `replicas`: of the KV bucket when this call creates it (3 on a JetStream cluster).
    """
    if mode == "off":
        return None
    if mode == "local":
        return LocalLimiter(config)
    if mode == "nats":
        if not nats_url:
            raise BadInputError("limiter mode 'nats' needs a NATS URL (NATS_URL)")
        return await NatsKvLimiter.connect(
            nats_url, bucket=bucket, config=config, connect_options=connect_options,
            replicas=replicas,
        )  # fmt: skip
    raise BadInputError(f"limiter mode must be 'nats', 'local' or 'off', got {mode!r}")
