"""Text helpers every surface shares."""

from __future__ import annotations


def number(n: int) -> str:
    """An integer with Dutch thousands separators (5.242.880)."""
    return f"{n:,}".replace(",", ".")
