"""ISO weeks, the key of scores, the curriculum and the weekly topic: one definition."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime

from shared.errors import BadInputError

ISO_WEEK_PATTERN = r"^\d{4}-W(0[1-9]|[1-4]\d|5[0-3])$"
ISO_WEEK_RE = re.compile(ISO_WEEK_PATTERN)

__all__ = ["ISO_WEEK_PATTERN", "ISO_WEEK_RE", "iso_week"]


def iso_week(day: date | None = None) -> str:
    """The ISO week of a date or datetime (default: now, UTC) as 'YYYY-Www'.

    2027-01-01 is in '2026-W53'; a non-date is a BadInputError.
    """
    moment = datetime.now(UTC) if day is None else day
    if not isinstance(moment, date):
        raise BadInputError(f"iso_week needs a date, got {type(moment).__name__}")
    year, week, _ = moment.isocalendar()
    return f"{year:04d}-W{week:02d}"
