"""Per-model token prices and the cost of one call, cache writes and reads included."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import lru_cache

log = logging.getLogger(__name__)

# Prompt-cache multipliers on the input price: 5-minute writes cost 1.25×, reads 0.1×.
CACHE_WRITE_FACTOR = 1.25
CACHE_READ_FACTOR = 0.1


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float


FREE = Price(0.0, 0.0)

# (family, minimum version) → price; the first entry whose family matches and whose
# minimum version is ≤ the model's version wins, so newer generations come first.
_TABLE: tuple[tuple[str, tuple[int, int], Price], ...] = (
    ("opus", (4, 5), Price(5.0, 25.0)),
    ("opus", (4, 0), Price(15.0, 75.0)),
    ("opus", (3, 0), Price(15.0, 75.0)),
    ("sonnet", (3, 0), Price(3.0, 15.0)),
    ("haiku", (4, 5), Price(1.0, 5.0)),
    ("haiku", (3, 5), Price(0.8, 4.0)),
    ("haiku", (3, 0), Price(0.25, 1.25)),
)

_MODEL_RE = re.compile(r"(opus|sonnet|haiku)-(\d{1,2})(?!\d)(?:[-.](\d{1,2})(?!\d))?")
_LEGACY_RE = re.compile(r"claude-(\d+)(?:-(\d{1,2}))?-(opus|sonnet|haiku)")


def _family_version(model: str) -> tuple[str, tuple[int, int]] | None:
    lowered = model.lower()
    match = _MODEL_RE.search(lowered)
    if match:
        return match.group(1), (int(match.group(2)), int(match.group(3) or 0))
    legacy = _LEGACY_RE.search(lowered)  # e.g. claude-3-5-haiku-20241022
    if legacy:
        return legacy.group(3), (int(legacy.group(1)), int(legacy.group(2) or 0))
    return None


# Newest generation whose prices are confirmed; later ones reuse their family's latest price.
_CONFIRMED_UP_TO = (4, 99)
_UNPRICED = frozenset({"offline"})


@lru_cache(maxsize=256)
def price_for(model: str) -> Price:
    """The price of a model id (dated ids and aliases alike); unknown models cost 0 (logged)."""
    parsed = _family_version(model)
    if parsed is None:
        if model not in _UNPRICED:
            log.warning("no price known for model %r; its calls are recorded at cost 0", model)
        return FREE
    family, version = parsed
    for name, minimum, price in _TABLE:
        if name == family and version >= minimum:
            if version > _CONFIRMED_UP_TO:
                log.warning(
                    "price of %r assumed equal to %s %d.%d+ (%s); update shared/llm/pricing.py",
                    model,
                    family,
                    *minimum,
                    price,
                )
            return price
    return FREE


def cost_usd(
    model: str,
    *,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cache_creation_input_tokens: int = 0,
    cache_read_input_tokens: int = 0,
) -> float:
    """The USD cost of one response's usage (input excludes cache tokens, as the API reports)."""
    price = price_for(model)
    micro = (
        input_tokens * price.input
        + cache_creation_input_tokens * price.input * CACHE_WRITE_FACTOR
        + cache_read_input_tokens * price.input * CACHE_READ_FACTOR
        + output_tokens * price.output
    )
    return micro / 1_000_000
