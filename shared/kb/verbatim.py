"""Topics named verbatim: every label's and id's word sequence, kept as sorted 64-bit hashes.

A question mentions a topic when one of its word runs equals the topic's label or id word
for word (stopwords kept, accents folded). Sequences are stored as hashes of their word
tuples next to the topic number (12 bytes a sequence instead of a tuple of strings); a
question probes its runs of the stored lengths with one binary search each, only where a
word that starts a longer label is followed by one that comes second in one. What a single
word names, and whether it starts or follows in a longer label, is remembered per word (a
bounded cache): chat repeats words, and most labels of a large KB are one word long.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable

import numpy as np

from shared.kb.analysis import HashedWords
from shared.kb.models import TopicLike
from shared.kb.steps import Steps, run_steps
from shared.kb.tokens import STOPWORDS, tokenize

MAX_VERBATIM_WORDS = 12
FIRST_CACHE = 4096  # words remembered with what they name and where they stand in labels
_NAMES_NOTHING: tuple[tuple[int, ...], bool, bool] = ((), False, False)


def _sequences(topic: TopicLike) -> set[tuple[str, ...]]:
    found = set()
    for text in (topic.id, topic.label):
        sequence = tuple(tokenize(text, keep_stopwords=True))
        # A label made only of stopwords ("Het") would match nearly every message, and a
        # very long one is never typed out verbatim.
        if not sequence or len(sequence) > MAX_VERBATIM_WORDS:
            continue
        if all(word in STOPWORDS for word in sequence):
            continue
        found.add(sequence)
    return found


class Mentions:
    """Immutable lookup from word sequences to the topics whose label or id they are."""

    __slots__ = ("_docs", "_first", "_firsts", "_keys", "_longer", "_seconds", "_sizes")

    def __init__(
        self, keys: np.ndarray, docs: np.ndarray, sizes: np.ndarray, firsts: HashedWords,
        seconds: HashedWords,
    ) -> None:  # fmt: skip
        order = np.argsort(keys, kind="stable")
        # Python arrays: a question probes a handful of runs, cheaper by bisect than by numpy.
        self._keys = array("q", keys[order].astype(np.int64).tobytes())
        self._docs = array("i", docs[order].astype(np.int32).tobytes())
        self._sizes = sizes  # distinct sequence lengths, ascending
        self._longer = tuple(size for size in sizes.tolist() if size > 1)
        # The first and the second word of every longer sequence: most runs never probe.
        self._firsts, self._seconds = firsts, seconds
        # word → the topics it names on its own, whether it starts a longer sequence, and
        # whether it comes second in one
        self._first: dict[str, tuple[tuple[int, ...], bool, bool]] = {}

    @classmethod
    def of(cls, topics: Iterable[TopicLike]) -> Mentions:
        """Mentions of these topics, numbered in order."""
        return run_steps(cls.collecting(topics))

    @classmethod
    def collecting(cls, topics: Iterable[TopicLike]) -> Steps[Mentions]:
        """`of` in steps: one slice per topic (shared.kb.steps), the sorting in numpy."""
        keys = array("q")
        docs = array("i")
        sizes: set[int] = set()
        firsts: set[str] = set()
        seconds: set[str] = set()
        for number, topic in enumerate(topics):
            for sequence in _sequences(topic):
                keys.append(hash(sequence))
                docs.append(number)
                sizes.add(len(sequence))
                if len(sequence) > 1:
                    firsts.add(sequence[0])
                    seconds.add(sequence[1])
            yield None
        first_hashes = array("q", map(hash, firsts))
        second_hashes = array("q", map(hash, seconds))
        del firsts, seconds
        yield None
        mentions: Mentions = yield lambda: cls(
            np.frombuffer(keys, dtype=np.int64),
            np.frombuffer(docs, dtype=np.int32),
            np.asarray(sorted(sizes), dtype=np.int16),
            HashedWords.of_sorted(np.unique(np.frombuffer(first_hashes, dtype=np.int64))),
            HashedWords.of_sorted(np.unique(np.frombuffer(second_hashes, dtype=np.int64))),
        )
        return mentions

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        arrays = (len(self._keys) * 8, len(self._docs) * 4, self._sizes.nbytes)
        return int(sum(arrays)) + self._firsts.nbytes + self._seconds.nbytes

    def find(self, text: str) -> set[int]:
        """Topic numbers whose label or id the text contains as a run of whole words."""
        return self.find_words(tuple(tokenize(text, keep_stopwords=True)))

    def find_words(self, words: tuple[str, ...]) -> set[int]:
        """find() over a text's tokens, stopwords kept (one tokenisation per question)."""
        if not self._keys:
            return set()
        get, longer = self._first.get, self._longer
        entries = [get(word) or self._remember(word) for word in words]
        n = len(words)
        found: set[int] = set()
        for start, (named, starts, _) in enumerate(entries):
            if named:
                found.update(named)
            if not starts or start + 1 == n or not entries[start + 1][2]:
                continue
            for size in longer:  # ascending
                end = start + size
                if end > n:
                    break
                found.update(self._probe(hash(words[start:end])))
        return found

    def _remember(self, word: str) -> tuple[tuple[int, ...], bool, bool]:
        """The topics a word names on its own, whether it starts a longer sequence and
        whether it comes second in one; kept in the bounded per-word cache."""
        named = tuple(self._probe(hash((word,))))
        starts, follows = word in self._firsts, word in self._seconds
        entry = (named, starts, follows) if named or starts or follows else _NAMES_NOTHING
        if len(self._first) >= FIRST_CACHE:
            self._first.clear()
        self._first[word] = entry
        return entry

    def _probe(self, key: int) -> list[int]:
        """The topics whose sequence hashes to `key`."""
        keys, docs = self._keys, self._docs
        at = bisect.bisect_left(keys, key)
        found = []
        while at < len(keys) and keys[at] == key:
            found.append(docs[at])
            at += 1
        return found

    def spliced(self, keep: np.ndarray, added: Mentions) -> Mentions:
        """Without the topics not in `keep` (renumbered in order), plus `added` after them."""
        own_docs = np.frombuffer(self._docs, dtype=np.int32)
        new_docs = np.frombuffer(added._docs, dtype=np.int32)
        alive = keep[own_docs]
        renumber = np.cumsum(keep, dtype=np.int64) - 1
        n_kept = int(keep.sum())
        docs = np.concatenate([renumber[own_docs[alive]], new_docs.astype(np.int64) + n_kept])
        own_keys = np.frombuffer(self._keys, dtype=np.int64)
        return Mentions(
            np.concatenate([own_keys[alive], np.frombuffer(added._keys, dtype=np.int64)]),
            docs.astype(np.int32),
            np.union1d(self._sizes, added._sizes).astype(np.int16),
            self._firsts.union_hashes(added._firsts),
            self._seconds.union_hashes(added._seconds),
        )

    def appended(self, added: Mentions, first: int) -> Mentions:
        """These mentions plus `added`'s, whose topics are numbered from `first` on."""
        own_keys = np.frombuffer(self._keys, dtype=np.int64)
        new_docs = np.frombuffer(added._docs, dtype=np.int32).astype(np.int64) + first
        return Mentions(
            np.concatenate([own_keys, np.frombuffer(added._keys, dtype=np.int64)]),
            np.concatenate([np.frombuffer(self._docs, dtype=np.int32), new_docs]).astype(np.int32),
            np.union1d(self._sizes, added._sizes).astype(np.int16),
            self._firsts.union_hashes(added._firsts),
            self._seconds.union_hashes(added._seconds),
        )
