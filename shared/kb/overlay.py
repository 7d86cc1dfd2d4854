"""An immutable mapping that derives its next version in O(changes): a base plus an overlay.

A KB snapshot keeps several id-keyed dicts (topics, labels, topic numbers, relations per
topic). Copying a 50k-entry dict per update is one long call that holds the GIL; here an
update copies only the small overlay of entries changed since the base, and folds it into a
new base once it outgrows a share of it (the updates since then paid for that copy).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, cast

from shared.kb.steps import Steps, run_steps

FOLD_SHARE = 0.125
FOLD_MIN = 1024
SLICE = 512  # entries per slice of a derivation in steps
_GONE: Any = object()
_MISSING: Any = object()


class Layered[K, V](Mapping[K, V]):
    """A read-only mapping: `base` (never changed) with `changes` laid over it."""

    __slots__ = ("_base", "_changes", "_size")

    def __init__(self, base: Mapping[K, V] | Iterable[tuple[K, V]] = ()) -> None:
        self._base: dict[K, V] = dict(base)
        self._changes: dict[K, V] = {}
        self._size = len(self._base)

    @classmethod
    def of(cls, base: dict[K, V]) -> Layered[K, V]:
        """A mapping over this dict, taken as it is (the caller hands it over: no copy)."""
        new = object.__new__(cls)
        new._base, new._changes, new._size = base, {}, len(base)
        return new

    def derive(self, *, put: Iterable[tuple[K, V]] = (), drop: Iterable[K] = ()) -> Layered[K, V]:
        """A new version with these entries set and those removed; this one is left as is."""
        return run_steps(self.deriving(put=put, drop=drop))

    def deriving(
        self, *, put: Iterable[tuple[K, V]] = (), drop: Iterable[K] = ()
    ) -> Steps[Layered[K, V]]:
        """`derive` in steps (shared.kb.steps): one slice per SLICE entries."""
        base, changes, size = self._base, dict(self._changes), self._size

        def present(key: K) -> bool:
            value = changes.get(key, _MISSING)
            return key in base if value is _MISSING else value is not _GONE

        for at, key in enumerate(drop):
            if present(key):
                size -= 1
                changes[key] = _GONE
            if at % SLICE == SLICE - 1:
                yield None
        for at, (key, value) in enumerate(put):
            if not present(key):
                size += 1
            changes[key] = value
            if at % SLICE == SLICE - 1:
                yield None
        new = object.__new__(Layered)
        if len(changes) > max(FOLD_MIN, FOLD_SHARE * len(self._base)):
            # One copy in C (a chunked copy allocates a tuple an entry, and the young
            # collections it sets off walk the growing copy again and again).
            base = dict(self._base)
            yield None
            for at, (key, value) in enumerate(changes.items()):
                if value is _GONE:
                    base.pop(key, None)
                else:
                    base[key] = value
                if at % SLICE == SLICE - 1:
                    yield None
            new._base, new._changes = base, {}
        else:
            new._base, new._changes = self._base, changes
        new._size = size
        return cast(Layered[K, V], new)

    def __getitem__(self, key: K) -> V:
        value = self._changes.get(key, _MISSING)
        if value is _MISSING:
            return self._base[key]
        if value is _GONE:
            raise KeyError(key)
        found: V = value
        return found

    def __contains__(self, key: object) -> bool:
        value = cast(dict[object, Any], self._changes).get(key, _MISSING)
        if value is _MISSING:
            return key in self._base
        return value is not _GONE

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[K]:
        changes = self._changes
        for key in self._base:
            if key not in changes:
                yield key
        for key, value in changes.items():
            if value is not _GONE:
                yield key
