"""Which migrations a store still needs: the rule both adapters (SQLite, MongoDB) follow."""

from __future__ import annotations

OUT_OF_ORDER_FROM = 13
"""From here on, numbers were handed to parallel work: a migration that lands after a higher
one (13 after 15, say) still applies to a store already at the higher version. Every applied
version is recorded, so each still runs exactly once; the older ones stay strictly in order."""


def must_apply(version: int, *, current: int, recorded: set[int]) -> bool:
    """Whether a migration is pending on a store at `current` with `recorded` versions."""
    if version in recorded:
        return False
    return version > current or version >= OUT_OF_ORDER_FROM
