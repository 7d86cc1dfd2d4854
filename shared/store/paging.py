"""Keyset paging of the graph: topics after an id, relations after a key, a page at a time.

A reader of the whole graph (the r42 service's full rebuild) takes it in short pages, so
no single read holds the store's connection or the caller's event loop for long.
"""

from __future__ import annotations

from shared.errors import BadInputError
from shared.store.models import RelationKey

PAGE = 500  # rows per page unless the caller says otherwise
MAX_PAGE = 10_000


def checked_page(limit: object) -> int:
    """A page size: a whole number in 1..MAX_PAGE."""
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_PAGE:
        raise BadInputError(f"a page size must be a whole number in 1..{MAX_PAGE}, got {limit!r}")
    return limit


def checked_after(after_id: object) -> str:
    """The id a topic page starts after: a string."""
    if not isinstance(after_id, str):
        raise BadInputError(f"after_id must be a topic id string, got {after_id!r}")
    return after_id


def checked_key(after: object) -> tuple[str, str, str]:
    """The key a relation page starts after, as (source, target, type)."""
    if not isinstance(after, RelationKey):
        raise BadInputError(f"after must be a RelationKey, got {type(after).__name__}")
    return after.as_tuple()
