"""One human reason for a pydantic ValidationError, shared by every entry point."""

from __future__ import annotations

from pydantic import ValidationError

KEBAB_ID_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
_KEBAB_HINT = "is not a lowercase kebab-case id (letters a-z, digits, single hyphens)"
MAX_ERRORS_SHOWN = 5

__all__ = ["KEBAB_ID_PATTERN", "MAX_ERRORS_SHOWN", "describe_validation"]


def describe_validation(exc: ValidationError, *, limit: int = MAX_ERRORS_SHOWN) -> str:
    """A one-line reason: where and what, at most `limit` errors, never the input itself
    (it may be large or private) except the offending id of a kebab-case pattern."""
    parts = []
    for error in exc.errors(include_url=False)[:limit]:
        where = ".".join(str(p) for p in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        if (error.get("ctx") or {}).get("pattern") == KEBAB_ID_PATTERN:
            message = f"{error['input']!r} {_KEBAB_HINT}"
        parts.append(f"{where}: {message}" if where else message)
    more = exc.error_count() - limit
    if more > 0:
        parts.append(f"(+{more} more)")
    return "; ".join(parts)
