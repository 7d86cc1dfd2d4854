"""The term vocabulary of one index lineage: append-only, shared, read through sized views.

Terms are only ever added (a removed topic's terms keep their numbers), so every index
derived from one build can share one dict and one list: an update appends the terms it
needs, and each index reads through a view that ignores numbers past its own size. An
update therefore never copies the vocabulary (at 50k topics a copy is one long call that
holds the GIL).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator

import numpy as np


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

    __slots__ = ("_live", "_numbers", "_size", "_terms")

    def __init__(self, vocabulary: Vocabulary, size: int) -> None:
        self._numbers = vocabulary._numbers
        self._terms = vocabulary._terms
        self._size = size
        # Terms some topic of the index holds (None: all); an updated index hides the
        # others (a removed topic's words), as a fresh build of its KB would not know them.
        self._live: np.ndarray | None = None

    def held(self, live: np.ndarray) -> VocabView:
        """This view showing only the terms marked live (a bool per term)."""
        view = object.__new__(VocabView)
        view._numbers, view._terms, view._size = self._numbers, self._terms, self._size
        if len(live) != self._size:
            raise ValueError(f"live marks {len(live)} terms, the view holds {self._size}")
        view._live = None if live.all() else live
        return view

    @property
    def live(self) -> np.ndarray | None:
        """Which term numbers a lookup may find (None: all of them)."""
        return self._live

    def get(self, term: str, default: int | None = None) -> int | None:
        """The term's number, or `default` when this view does not hold it."""
        number = self._numbers.get(term)
        if number is None or number >= self._size:
            return default
        return number if self._live is None or self._live[number] else default

    def found(self, terms: Iterable[str]) -> list[int]:
        """The numbers of those terms this view shows, in order (the others skipped)."""
        numbers, size, live = self._numbers, self._size, self._live
        held: list[int] = []
        for term in terms:
            number = numbers.get(term)
            if number is not None and number < size and (live is None or live[number]):
                held.append(number)
        return held

    def __contains__(self, term: object) -> bool:
        return isinstance(term, str) and self.get(term) is not None

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, number: int) -> str:
        if not 0 <= number < self._size:
            raise IndexError(number)
        return self._terms[number]

    def __iter__(self) -> Iterator[str]:
        return iter(self._terms[: self._size])
