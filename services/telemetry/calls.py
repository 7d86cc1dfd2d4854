"""Checking a reported LLM call before it is stored: sane numbers, cost from our own prices.

Any process on the bus can publish `llm.call.logged`, so the reported cost is never
trusted: it is recomputed from the tokens and the model's price (shared.llm.pricing), and
a record with negative or absurd numbers is refused (the consumer reports it on
`failed.llm.call.logged`) instead of poisoning `r42 ops` totals.
"""

from __future__ import annotations

from shared.errors import BadInputError
from shared.llm import LLMCallRecord, cost_usd

# One call is bounded by the largest context window plus its output, with a wide margin.
MAX_TOKENS = 5_000_000
# No call waits longer than a day (the client times out long before that).
MAX_DURATION_MS = 24 * 3600 * 1000.0
_TOKEN_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def checked_record(record: LLMCallRecord) -> LLMCallRecord:
    """The record with its cost recomputed; BadInputError when a number is impossible."""
    for name in _TOKEN_FIELDS:
        value = getattr(record, name)
        if not 0 <= value <= MAX_TOKENS:
            raise BadInputError(f"{name} {value} is outside 0..{MAX_TOKENS:,}")
    if not 0 <= record.duration_ms <= MAX_DURATION_MS:
        raise BadInputError(f"duration_ms {record.duration_ms} is outside 0..{MAX_DURATION_MS:,}")
    cost = cost_usd(record.model, **{name: getattr(record, name) for name in _TOKEN_FIELDS})
    return record.model_copy(update={"cost_usd": cost})
