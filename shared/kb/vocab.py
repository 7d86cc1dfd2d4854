"""The term vocabulary of one index lineage: append-only, shared, read through sized views.

Terms are only ever added (a removed topic's terms keep their numbers), so every index
derived from one build can share one dict and one list: an update appends the terms it
needs, and each index reads through a view that ignores numbers past its own size. An
update therefore never copies the vocabulary (at 50k topics a copy is one long call that
holds the GIL).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator


class Vocabulary:
    """Term → number, shared by an index and the indexes derived from it."""

    __slots__ = ("_lock", "_numbers", "_terms")

    def __init__(self) -> None:
        self._numbers: dict[str, int] = {}
        self._terms: list[str] = []
        self._lock = threading.Lock()

    @property
    def lock(self) -> threading.Lock:
        """Held while an update appends terms (two updates of one lineage never interleave)."""
        return self._lock

    def add(self, term: str) -> int:
        """The term's number, appending it when new."""
        number = self._numbers.get(term)
        if number is None:
            number = len(self._terms)
            self._numbers[term] = number
            self._terms.append(term)
        return number

    def __len__(self) -> int:
        return len(self._terms)

    def view(self) -> VocabView:
        """The vocabulary as it is now; terms added later stay invisible to the view."""
        return VocabView(self, len(self._terms))


class VocabView:
    """A read-only, fixed-size view of a Vocabulary (one index's terms)."""

    __slots__ = ("_numbers", "_size", "_terms")

    def __init__(self, vocabulary: Vocabulary, size: int) -> None:
        self._numbers = vocabulary._numbers
        self._terms = vocabulary._terms
        self._size = size

    def get(self, term: str, default: int | None = None) -> int | None:
        """The term's number, or `default` when this view does not hold it."""
        number = self._numbers.get(term)
        return number if number is not None and number < self._size else default

    def __contains__(self, term: object) -> bool:
        number = self._numbers.get(term) if isinstance(term, str) else None
        return number is not None and number < self._size

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, number: int) -> str:
        if not 0 <= number < self._size:
            raise IndexError(number)
        return self._terms[number]

    def __iter__(self) -> Iterator[str]:
        return iter(self._terms[: self._size])
