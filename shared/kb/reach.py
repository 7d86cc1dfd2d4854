"""What each query word reaches, packed for the kernel: one numbered entry per word.

A question's words repeat across a chat, and analysing one (stem, split, compound
expansion) costs far more than scoring it, so each index keeps what its words reach. The
entries live in flat arrays (CSR over word numbers: terms, their match factors, the word's
own weight), so a search passes word numbers to the kernel, which expands them itself: no
per-query lists or arrays of terms. Entries are only ever appended (under a lock; a word's
number is published after its entry is written) and the arrays are replaced, never
resized in place, when they grow: a search that captured the arrays after resolving its
words reads complete entries whatever other threads add meanwhile.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

_FIRST_WORDS = 64
_FIRST_LINKS = 1024


class Terms(NamedTuple):
    """One query's links word → term: term, score weight, word number, match factor."""

    cols: np.ndarray
    weights: np.ndarray
    concept: np.ndarray
    factors: np.ndarray
    concept_weight: np.ndarray  # per distinct word


class Packed(NamedTuple):
    """The arrays of a Reach, as one snapshot: entry i's terms are cols[indptr[i]:indptr[i+1]]."""

    indptr: np.ndarray  # int64, words + 1
    cols: np.ndarray  # int64 term columns
    factors: np.ndarray  # float64 match factor per term
    weight: np.ndarray  # float64 per word: its own weight (idf, or the unknown-word idf)


def _packed(words: int, links: int) -> Packed:
    return Packed(
        np.zeros(words + 1, dtype=np.int64),
        np.zeros(links, dtype=np.int64),
        np.zeros(links, dtype=np.float64),
        np.zeros(words, dtype=np.float64),
    )


class Reach:
    """A bounded, append-only table of query words and the terms each reaches."""

    __slots__ = ("_lock", "arrays", "numbers")

    def __init__(self) -> None:
        self.numbers: dict[str, int] = {}  # word → entry number
        self.arrays = _packed(_FIRST_WORDS, _FIRST_LINKS)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self.numbers)

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        return sum(int(a.nbytes) for a in self.arrays)

    def add(self, word: str, cols: Sequence[int], factors: Sequence[float], weight: float) -> int:
        """The entry number of `word`, appending its entry if it has none yet."""
        with self._lock:
            number = self.numbers.get(word)
            if number is not None:
                return number
            number = len(self.numbers)
            arrays = self.arrays
            start = int(arrays.indptr[number])
            end = start + len(cols)
            if number + 1 >= len(arrays.weight) or end > len(arrays.cols):
                arrays = self._grown(arrays, number, end)
            arrays.cols[start:end] = cols
            arrays.factors[start:end] = factors
            arrays.weight[number] = weight
            arrays.indptr[number + 1] = end
            self.numbers[word] = number  # published last: the entry is complete
            return number

    def _grown(self, arrays: Packed, words: int, links: int) -> Packed:
        """Copies with room for twice as much; the old arrays stay valid for readers."""
        grown = _packed(max(2 * len(arrays.weight), words + 2), max(2 * len(arrays.cols), links))
        used = int(arrays.indptr[words])
        grown.indptr[: words + 1] = arrays.indptr[: words + 1]
        grown.cols[:used] = arrays.cols[:used]
        grown.factors[:used] = arrays.factors[:used]
        grown.weight[:words] = arrays.weight[:words]
        self.arrays = grown
        return grown

    def resolve(
        self,
        words: Sequence[str],
        reach: Callable[[str], tuple[Sequence[int], Sequence[float], float]],
    ) -> list[int]:
        """Entry numbers of these (distinct) words, `reach` computing the missing entries."""
        get = self.numbers.get
        numbers = [get(word, -1) for word in words]
        if -1 in numbers:
            numbers = [
                n if n >= 0 else self.add(word, *reach(word))
                for word, n in zip(words, numbers, strict=True)
            ]
        return numbers


def word_counts(tokens: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """A question's distinct words in order, and each one's weight for repeating (1 + ln n),
    or an empty array when no word repeats (every weight 1)."""
    counts = dict.fromkeys(tokens, 0)
    if len(counts) == len(tokens):
        return list(counts), _ONES
    for token in tokens:
        counts[token] += 1
    tf = [1.0 if n == 1 else 1.0 + math.log(n) for n in counts.values()]
    return list(counts), np.array(tf, dtype=np.float64)


_ONES = np.zeros(0, dtype=np.float64)


def terms_of(arrays: Packed, numbers: Sequence[int], word_tf: np.ndarray) -> Terms:
    """The links of a question's words (as the kernel expands them), for the numpy path."""
    indptr, cols_all, factors_all, weight_all = arrays
    cols: list[int] = []
    factors: list[float] = []
    weights: list[float] = []
    concept: list[int] = []
    concept_weight: list[float] = []
    unknown: list[int] = []  # words the KB never uses
    cap = 0.0  # the highest weight of a word it does use
    tfs = word_tf.tolist() if len(word_tf) else [1.0] * len(numbers)
    for number, (entry, tf) in enumerate(zip(numbers, tfs, strict=True)):
        lo, hi = int(indptr[entry]), int(indptr[entry + 1])
        reached_factors = factors_all[lo:hi].tolist()
        cols += cols_all[lo:hi].tolist()
        factors += reached_factors
        weights += [factor * tf for factor in reached_factors]
        weight = float(weight_all[entry]) * tf
        concept += [number] * (hi - lo)
        concept_weight.append(weight)
        if hi > lo:
            cap = max(cap, weight)
        else:
            unknown.append(number)
    # A word the KB never uses counts as much as the question's most specific KB word,
    # not more: in a small KB every shared word is common and would drown otherwise.
    if unknown and cols:
        for number in unknown:
            concept_weight[number] = min(concept_weight[number], cap)
    return Terms(
        np.array(cols, dtype=np.int64),
        np.array(weights, dtype=np.float64),
        np.array(concept, dtype=np.int64),
        np.array(factors, dtype=np.float64),
        np.array(concept_weight, dtype=np.float64),
    )
