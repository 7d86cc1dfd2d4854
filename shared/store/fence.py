"""Fences: a write that lands only while its writer still holds a named lease."""

from __future__ import annotations

from dataclasses import dataclass

from shared.errors import TransientError


class LeaseLostError(TransientError):
    """The lease was lost (its holder stalled past the TTL and another worker took it over).

    The work it guarded must stop: no model call and no write. Transient, so a redelivered
    request is answered again (by then from what the new holder stored).
    """


@dataclass(frozen=True)
class Fence:
    """Who must still hold which lease for a fenced write to land (checked at write time)."""

    name: str
    owner: str

    def lost(self) -> LeaseLostError:
        """The error a fenced write raises when the lease is no longer this owner's."""
        return LeaseLostError(
            f"the lease {self.name!r} was taken over by another worker; this write was dropped"
        )
