"""Compound-word fallback: map a query word onto vocabulary terms sharing a stem.

Dutch glues words together (`pensioen` → `partnerpensioen`, `pensioenregeling`), so a
query word is also matched to terms that share its first 6 characters, contain it, or are
contained in it. Everything is precomputed at build time so a query never scans the
vocabulary: every 6-character gram of every term is encoded as an integer (the alphabet
after tokenisation is [a-z0-9-]) and stored in sorted numpy arrays, shortest terms first
within a gram; the first gram of a term doubles as its prefix key.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from shared.kb.steps import Steps, run_steps
from shared.kb.vocab import VocabView

STEM_CHARS = 6
MAX_EXPANSIONS = 32
MAX_TOKEN_CHARS = 64  # longer "words" are pasted ids or noise; their substrings are not stems
_VERIFY_BUDGET = 4  # containment candidates checked per wanted expansion
# Terms added since the build stay in a second segment until they outgrow this share of it.
MERGE_SHARE = 0.125
MERGE_MIN_TERMS = 2048
SLICE_TERMS = 512  # terms read per slice of a build in steps

_ALPHABET = "-0123456789abcdefghijklmnopqrstuvwxyz"
_BASE = len(_ALPHABET) + 1  # 0 is reserved so "a" and "-a" never share a code
_BYTE_CODE = np.zeros(256, dtype=np.int64)
_BYTE_CODE[np.frombuffer(_ALPHABET.encode(), dtype=np.uint8)] = np.arange(1, _BASE)
_CHAR_CODE = {ch: i + 1 for i, ch in enumerate(_ALPHABET)}
_WORD_RE = re.compile(r"[a-z0-9-]+")


def is_stem_word(token: str) -> bool:
    """Whether a token takes part in compound matching (6–64 chars of [a-z0-9-], not a number)."""
    return (
        STEM_CHARS <= len(token) <= MAX_TOKEN_CHARS
        and _WORD_RE.fullmatch(token) is not None
        and not token.replace("-", "").isdigit()
    )


def _gram_code(gram: str) -> int:
    code = 0
    for ch in gram:
        code = code * _BASE + _CHAR_CODE[ch]
    return code


def _gram_codes(token: str) -> list[int]:
    """Codes of every 6-gram of a token, in order (a rolling _gram_code)."""
    top = _BASE**STEM_CHARS
    codes: list[int] = []
    code = 0
    for at, ch in enumerate(token):
        code = (code * _BASE + _CHAR_CODE[ch]) % top
        if at >= STEM_CHARS - 1:
            codes.append(code)
    return codes


def _term_grams(terms: list[str], length: int) -> np.ndarray:
    """Codes of every 6-gram of equally long terms: shape (len(terms), length - 5)."""
    chars = _BYTE_CODE[np.frombuffer("".join(terms).encode("ascii"), dtype=np.uint8)]
    chars = chars.reshape(len(terms), length)
    width = length - STEM_CHARS + 1
    codes = np.zeros((len(terms), width), dtype=np.int64)
    for offset in range(STEM_CHARS):
        codes = codes * _BASE + chars[:, offset : offset + width]
    return codes


def _held(numbers: np.ndarray, live: np.ndarray | None) -> np.ndarray:
    return numbers if live is None else numbers[live[numbers]]


class _Postings:
    """An immutable multimap: integer key → term numbers (in insertion order), binary searched."""

    __slots__ = ("_keys", "_starts", "_terms")

    def __init__(self, keys: np.ndarray, terms: np.ndarray) -> None:
        order = np.argsort(keys, kind="stable")  # stable: shortest terms stay first
        # 38**6 < 2**32: a 6-gram code fits in 4 bytes.
        keys, self._terms = keys[order].astype(np.uint32), terms[order].astype(np.int32)
        if len(keys):
            first = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        else:
            first = np.zeros(0, dtype=np.int64)
        self._keys = keys[first]
        self._starts = np.r_[first, len(keys)].astype(np.int32)

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """Every (key, term number) entry, in order."""
        return np.repeat(self._keys, np.diff(self._starts)), self._terms

    def _slot(self, key: int) -> int:
        slot = int(np.searchsorted(self._keys, key))
        return slot if slot < len(self._keys) and int(self._keys[slot]) == key else -1

    def get(self, key: int) -> np.ndarray:
        slot = self._slot(key)
        if slot < 0:
            return self._terms[:0]
        return self._terms[self._starts[slot] : self._starts[slot + 1]]

    def sizes(self, keys: list[int]) -> np.ndarray:
        if not len(self._keys):
            return np.zeros(len(keys), dtype=np.int64)
        probe = np.asarray(keys, dtype=np.int64)
        slots = np.minimum(np.searchsorted(self._keys, probe), len(self._keys) - 1)
        hit = self._keys[slots] == probe
        return np.where(hit, self._starts[slots + 1] - self._starts[slots], 0)

    @property
    def nbytes(self) -> int:
        return int(self._keys.nbytes + self._starts.nbytes + self._terms.nbytes)


class _Segment:
    """The gram and prefix lookups of the terms numbered [start, end)."""

    __slots__ = ("end", "grams", "lengths", "prefixes", "start")

    def __init__(self, terms: VocabView, start: int, end: int) -> None:
        run_steps(self._filling(terms, start, end))

    def _filling(self, terms: VocabView, start: int, end: int) -> Steps[None]:
        """The lookups in steps: term strings read a slice at a time, the grams in numpy."""
        self.start, self.end = start, end
        lengths: list[int] = []
        by_length: dict[int, list[int]] = {}
        for first in range(start, end, SLICE_TERMS):
            for number in range(first, min(first + SLICE_TERMS, end)):
                term = terms[number]
                lengths.append(len(term))
                if is_stem_word(term):
                    by_length.setdefault(len(term), []).append(number)
            yield None
        self.lengths = np.asarray(lengths, dtype=np.int16).reshape(-1)
        gram_keys, gram_terms, prefix_keys, prefix_terms = [], [], [], []
        for length in sorted(by_length):  # ascending, so postings list shorter terms first
            numbers = np.asarray(by_length[length], dtype=np.int32)
            spelled: list[str] = []
            for first in range(0, len(numbers), SLICE_TERMS * 8):
                spelled += [terms[n] for n in by_length[length][first : first + SLICE_TERMS * 8]]
                yield None
            codes: np.ndarray = yield functools.partial(_term_grams, spelled, length)
            gram_keys.append(codes.ravel())
            gram_terms.append(np.repeat(numbers, codes.shape[1]))
            prefix_keys.append(codes[:, 0])
            prefix_terms.append(numbers)
        empty = [np.zeros(0, dtype=np.int64)]
        found: tuple[_Postings, _Postings] = yield lambda: (
            _Postings(np.concatenate(gram_keys or empty), np.concatenate(gram_terms or empty)),
            _Postings(np.concatenate(prefix_keys or empty), np.concatenate(prefix_terms or empty)),
        )
        self.grams, self.prefixes = found

    @classmethod
    def merged(cls, first: _Segment, then: _Segment) -> _Segment:
        """One segment over both ranges (`then` starts where `first` ends): numpy passes only.

        Entries are put in the order a segment built over the whole range lists them
        (shorter terms first, then by number) before the stable sort by key.
        """
        merged = object.__new__(cls)
        merged.start, merged.end = first.start, then.end
        merged.lengths = np.concatenate([first.lengths, then.lengths])
        for name in ("grams", "prefixes"):
            keys_a, terms_a = getattr(first, name).pairs()
            keys_b, terms_b = getattr(then, name).pairs()
            keys, terms = np.concatenate([keys_a, keys_b]), np.concatenate([terms_a, terms_b])
            order = np.lexsort((terms, merged.lengths[terms - merged.start]))
            setattr(merged, name, _Postings(keys[order], terms[order]))
        return merged

    def length(self, numbers: np.ndarray) -> np.ndarray:
        found: np.ndarray = self.lengths[numbers - self.start]
        return found

    @property
    def nbytes(self) -> int:
        return self.grams.nbytes + self.prefixes.nbytes + int(self.lengths.nbytes)


class CompoundIndex:
    """Precomputed prefix and substring lookups over a vocabulary that only grows.

    A base segment covers the terms of the build; terms added by updates go into a small
    second segment, rebuilt per update (its cost follows the new terms, not the KB) and
    folded into the base once it outgrows a share of it. Lookups merge both segments in
    the order one segment over all terms would give (shorter terms first, then by number).
    """

    __slots__ = ("_segments", "_terms")

    def __init__(self, terms: VocabView, _segments: tuple[_Segment, ...] | None = None) -> None:
        self._terms = terms
        self._segments = _segments or (_Segment(terms, 0, len(terms)),)

    @classmethod
    def building(cls, terms: VocabView) -> Steps[CompoundIndex]:
        """`CompoundIndex(terms)` in steps (shared.kb.steps)."""
        segment = object.__new__(_Segment)
        yield from segment._filling(terms, 0, len(terms))
        return cls(terms, (segment,))

    def extended(self, terms: VocabView) -> CompoundIndex:
        """These lookups over a vocabulary grown from this one's (the same terms first).

        Only the new terms are read as strings; merging them into the second segment, and
        that into the base when it outgrows its share, are numpy passes (no GIL held).
        """
        base, last = self._segments[0], self._segments[-1]
        if len(terms) == last.end:
            return CompoundIndex(terms, self._segments)
        new = _Segment(terms, last.end, len(terms))
        if last is base:
            return CompoundIndex(terms, (base, new))
        added = _Segment.merged(last, new)
        if added.end - added.start > max(MERGE_MIN_TERMS, MERGE_SHARE * base.end):
            return CompoundIndex(terms, (_Segment.merged(base, added),))
        return CompoundIndex(terms, (base, added))

    @property
    def nbytes(self) -> int:
        """Bytes held by the lookup arrays (the term strings are shared with the caller)."""
        return sum(segment.nbytes for segment in self._segments)

    def _first(self, found: list[tuple[_Segment, np.ndarray]], limit: int) -> list[int]:
        """The first `limit` term numbers of per-segment postings, merged by (length, number)."""
        if len(found) == 1:
            first: list[int] = found[0][1][:limit].tolist()
            return first
        numbers = np.concatenate([postings[:limit] for _, postings in found])
        lengths = np.concatenate([seg.length(postings[:limit]) for seg, postings in found])
        merged: list[int] = numbers[np.lexsort((numbers, lengths))][:limit].tolist()
        return merged

    def expand(self, token: str, limit: int = MAX_EXPANSIONS) -> tuple[int, ...]:
        """Term numbers related to a token by stem or containment, closest length first."""
        if not is_stem_word(token):
            return ()
        terms = vocabulary = self._terms
        segments = self._segments
        live = vocabulary.live  # after updates: terms no topic holds any more are skipped
        prefix = _gram_code(token[:STEM_CHARS])
        starting = [(seg, _held(seg.prefixes.get(prefix), live)) for seg in segments]
        found = set(self._first(starting, MAX_EXPANSIONS))
        # Terms containing the token: walk only its rarest gram's postings, then verify.
        codes = _gram_codes(token)
        sizes = np.sum([seg.grams.sizes(codes) for seg in segments], axis=0)
        if sizes.min() > 0:
            rarest = codes[int(np.argmin(sizes))]
            longer = []
            for seg in segments:
                postings = _held(seg.grams.get(rarest), live)
                longer.append((seg, postings[seg.length(postings) > len(token)]))
            contained = 0
            for number in self._first(longer, MAX_EXPANSIONS * _VERIFY_BUDGET):
                if token in terms[number]:
                    found.add(number)
                    contained += 1
                    if contained >= MAX_EXPANSIONS:
                        break
        # Terms contained in the token: every substring of 6 or more characters.
        n = len(token)
        found.update(
            vocabulary.found(
                token[start : start + size]
                for size in range(STEM_CHARS, n)
                for start in range(n - size + 1)
            )
        )
        own = vocabulary.get(token)
        if own is not None:
            found.discard(own)
        ranked = sorted([(abs(len(terms[m]) - n), terms[m], m) for m in found])
        return tuple(number for _, _, number in ranked[:limit])
