"""Language-aware analysis for retrieval: Snowball stems, decompounding, English → Dutch terms.

Text is accent-folded and tokenised (`shared.kb.tokens`), then every word becomes its Dutch
Snowball stem. Compounds are split against the KB's own vocabulary ("pensioenregeling" →
pensioen + regeling when both occur on their own), so a question that splits a compound
differently still meets it. English words reach Dutch terms through a small lexicon.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from array import array
from collections import Counter
from collections.abc import Container, Iterable
from dataclasses import dataclass

import numpy as np
import Stemmer

from shared.kb.lexicon import EN_NL
from shared.kb.steps import Steps, releasing, run_steps
from shared.kb.tokens import tokenize

MIN_HEAD_CHARS = 3
MIN_TAIL_CHARS = 4
MIN_UNKNOWN_HEAD_CHARS = 5  # a head the KB never uses alone must be long enough to mean something
MIN_COMPOUND_CHARS = 7
MAX_PARTS = 4
LINKS = ("s", "en", "e")
PREFIXES = frozenset(
    {"be", "er", "ge", "her", "ont", "ver"}
)  # never a compound's head  # Dutch linking sounds: ouderschap|s|verlof, pann|en|koek
CACHE = 65536
SLICE_WORDS = 256  # words per slice of a build in steps (a few hundred microseconds)
MERGE_MIN_WORDS = 4096
_DOUBLE_VOWEL_RE = re.compile(r"([aeou])\1([^aeiou])$")

# Function words that only one of the two languages uses; they decide a question's language.
_EN_ONLY = frozenset(
    "the what how who when where why which do does did can could should would will my your "
    "is are am i you get much many there any have has if after before about with".split()
)
_NL_ONLY = frozenset(
    "de het een wat hoe wie wanneer waar waarom welke ik mijn je jij jouw is zijn ben heb "
    "hebt krijg krijgt kan kun moet mag er bij voor naar als dan".split()
)


def detect_language(text: str) -> str:
    """'en' when a text reads as English, else 'nl' (the handbook's language)."""
    words = tokenize(text, keep_stopwords=True)
    english = sum(word in _EN_ONLY and word not in _NL_ONLY for word in words)
    dutch = sum(word in _NL_ONLY and word not in _EN_ONLY for word in words)
    return "en" if english > dutch else "nl"


class HashedWords:
    """A read-only set of words kept as sorted 64-bit hashes: 8 bytes a word, no strings.

    Python's str hash is stable within a process, which is all an in-memory index needs;
    a collision between two of a KB's words and a query substring is vanishingly rare
    and would only make a compound split one way more. Words added by `union` go into a
    small set beside the sorted array (an update costs its own words, not a re-sort of
    the KB's) until it outgrows a share of the array; then both merge in one numpy pass.
    """

    __slots__ = ("_extra", "_hashes")

    def __init__(self, words: Iterable[str]) -> None:
        self._hashes = array("q", sorted({hash(word) for word in words}))
        self._extra: frozenset[int] = frozenset()

    @classmethod
    def of_sorted(cls, hashes: np.ndarray) -> HashedWords:
        """The set of these word hashes (int64, sorted, unique)."""
        found = object.__new__(cls)
        found._hashes = array("q", hashes.astype(np.int64).tobytes())
        found._extra = frozenset()
        return found

    def __contains__(self, word: object) -> bool:
        return self._has(hash(word))

    def _has(self, key: int) -> bool:
        if key in self._extra:
            return True
        at = bisect.bisect_left(self._hashes, key)
        return at < len(self._hashes) and self._hashes[at] == key

    def __len__(self) -> int:
        return len(self._hashes) + len(self._extra)

    def _with(self, extra: Iterable[int]) -> HashedWords:
        merged = object.__new__(HashedWords)
        new = {key for key in extra if not self._has(key)}
        merged._hashes, merged._extra = self._hashes, self._extra.union(new)
        if len(merged._extra) > max(MERGE_MIN_WORDS, len(self._hashes) // 8):
            base = np.frombuffer(self._hashes, dtype=np.int64) if self._hashes else None
            fresh = np.fromiter(merged._extra, dtype=np.int64, count=len(merged._extra))
            union = fresh if base is None else np.union1d(base, fresh)
            merged._hashes, merged._extra = array("q", union.tobytes()), frozenset()
        return merged

    def union(self, words: Iterable[str]) -> HashedWords:
        """A new set with these words added."""
        return self._with(hash(word) for word in words)

    def union_hashes(self, other: HashedWords) -> HashedWords:
        """A new set holding the words of both (`other` is the small one)."""
        return self._with([*other._hashes, *other._extra])

    @property
    def nbytes(self) -> int:
        """Bytes held by the hashes."""
        return len(self._hashes) * self._hashes.itemsize + 8 * len(self._extra)


_NO_HASHES = np.zeros(0, dtype=np.int64)


def _chunks[T](items: Iterable[T], size: int) -> Iterable[list[T]]:
    it = iter(items)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


def plain_words(words: Iterable[str]) -> list[str]:
    """The words that may be a compound's head or tail: unhyphenated, not numbers, ≥ 3 chars."""
    return [w for w in words if "-" not in w and not w.isdigit() and len(w) >= MIN_HEAD_CHARS]


@dataclass(frozen=True, slots=True)
class Word:
    """One analysed word: its stem, the stems of its compound parts, and English translations."""

    stem: str
    parts: tuple[str, ...] = ()
    translations: tuple[str, ...] = ()


def _dutch_stemmer() -> functools._lru_cache_wrapper[str]:
    """Snowball Dutch, applied to a fixpoint and evened out where it is inconsistent.

    Snowball stems "fietsen" to "fiets" but "fiets" to "fiet", "dagen" to "daag" but "dag"
    to "dag", and keeps the verb ending in "verdient": repeating the stemmer, dropping a
    final d/t and undoubling the last vowel maps each of these pairs onto one term.
    """
    snowball = Stemmer.Stemmer("dutch").stemWord

    def stem(word: str) -> str:
        for _ in range(3):
            shorter = snowball(word)
            if shorter == word:
                break
            word = shorter
        if len(word) > 4 and word[-1] in "dt" and word[-2] not in "dt":
            word = word[:-1]
        return _DOUBLE_VOWEL_RE.sub(r"\1\2", word)

    return functools.lru_cache(maxsize=CACHE)(stem)


class Analyzer:
    """Stems and splits words against one KB's vocabulary; build per index, reuse per query."""

    __slots__ = (
        "_analysed", "_english", "_known", "_lexicon", "_splits", "_stem", "_tails", "_words",
    )  # fmt: skip

    _words: frozenset[str] | HashedWords
    _known: Container[str]
    _tails: Container[str]

    def __init__(self, words: Iterable[str]) -> None:
        run_steps(self._filling(words))

    @classmethod
    def building(cls, words: Iterable[str]) -> Steps[Analyzer]:
        """`Analyzer(words)` in steps (shared.kb.steps): slices of a few hundred words."""
        analyzer = object.__new__(cls)
        yield from analyzer._filling(words)
        return analyzer

    def _filling(self, words: Iterable[str]) -> Steps[None]:
        self._stem = _dutch_stemmer()
        self._english = Stemmer.Stemmer("english").stemWord
        plain: list[str] = []
        # A build's words come as a dict (word → number): distinct already, no set of them.
        unique = words if isinstance(words, (dict, set, frozenset)) else set(words)
        for chunk in _chunks(unique, SLICE_WORDS * 8):
            plain += [word for word in chunk if "-" not in word and not word.isdigit()]
            yield None
        # Words the KB uses on their own may be a compound's head or tail.
        heads: set[str] = set()
        for chunk in _chunks(plain, SLICE_WORDS * 8):
            heads.update(word for word in chunk if len(word) >= MIN_HEAD_CHARS)
            yield None
        self._words = frozenset(heads)
        del heads
        yield None
        known: set[str] = set()
        for chunk in _chunks(self._words, SLICE_WORDS):
            known.update(map(self._stem, chunk))
            yield None
        self._known = frozenset(known)
        # A word that only ever appears inside compounds ("pensioen" in partnerpensioen and
        # wezenpensioen) is still a tail when at least two different words end with it.
        endings: Counter[str] = Counter()
        for chunk in _chunks(plain, SLICE_WORDS):
            endings.update(
                word[cut:]
                for word in chunk
                if len(word) >= MIN_COMPOUND_CHARS
                for cut in range(MIN_HEAD_CHARS, len(word) - MIN_TAIL_CHARS)
            )
            yield None
        tails: set[str] = set()
        for counted in _chunks(endings.items(), SLICE_WORDS * 8):
            tails.update(ending for ending, count in counted if count >= 2)
            yield None
        yield from releasing(endings)
        self._tails = tails  # a set of hundreds of thousands: not copied into a frozenset
        self._lexicon = {
            self._english(en): tuple(nl) for en, nl in EN_NL.items()
        }  # fmt: skip
        # Plain dicts, not lru_cache(self._word): a cache holding a bound method would tie
        # the analyzer into a reference cycle that only the cyclic GC frees.
        self._analysed: dict[str, Word] = {}
        self._splits: dict[tuple[str, int], tuple[str, ...]] = {}

    def forget(self, vocabulary: Container[str]) -> None:
        """Drop what only indexing needs: cached words, the compound-only tails, the strings.

        Questions are split against words the KB uses on their own (kept as hashes); the
        compounds the tails explain are already split in the index. A question word whose
        stem is an index term (`vocabulary`) is Dutch and gets no translation.
        """
        run_steps(self.forgetting(vocabulary))

    def forgetting(self, vocabulary: Container[str]) -> Steps[None]:
        """`forget` in steps: the words are hashed a slice at a time, sorted in numpy."""
        tails, self._tails = self._tails, frozenset()
        if isinstance(tails, set):
            yield from releasing(tails)
        if isinstance(self._words, frozenset):
            hashed: list[np.ndarray] = []
            for chunk in _chunks(self._words, SLICE_WORDS * 8):
                hashed.append(np.fromiter(map(hash, chunk), dtype=np.int64, count=len(chunk)))
                yield None
            unique: np.ndarray = yield lambda: np.unique(np.concatenate([_NO_HASHES, *hashed]))
            self._words = HashedWords.of_sorted(unique)
        self._known = vocabulary
        self._analysed.clear()
        splits, self._splits = self._splits, {}
        yield from releasing(splits)
        self._stem.cache_clear()

    def extended(self, words: Iterable[str], vocabulary: Container[str]) -> Analyzer:
        """A copy that also knows these words (an updated KB), with empty caches."""
        copy = Analyzer(())
        current = HashedWords(self._words) if isinstance(self._words, frozenset) else self._words
        copy._words = current.union(plain_words(words))
        copy._known = vocabulary
        copy._tails = frozenset()
        return copy

    @property
    def nbytes(self) -> int:
        """Bytes held by the word hashes (after forget)."""
        return self._words.nbytes if isinstance(self._words, HashedWords) else 0

    def stem(self, word: str) -> str:
        """The Dutch Snowball stem of a folded word."""
        return self._stem(word)

    def analyse(self, word: str) -> Word:
        """Stem, compound parts and (for English words) Dutch translations of one token."""
        found = self._analysed.get(word)
        if found is None:
            found = self._word(word)
            if len(self._analysed) >= CACHE:
                self._analysed.clear()
            self._analysed[word] = found
        return found

    def analyse_uncached(self, word: str) -> Word:
        """Like analyse, bypassing its cache (indexing meets each distinct word once)."""
        return self._word(word)

    def terms(self, text: str) -> list[str]:
        """Index terms of a text: every word's stem followed by the stems of its parts."""
        found: list[str] = []
        for token in tokenize(text):
            word = self.analyse(token)
            found.append(word.stem)
            found.extend(word.parts)
        return found

    def _word(self, token: str) -> Word:
        stem = self._stem(token)
        parts: list[str] = []
        pieces = token.split("-") if "-" in token else [token]
        for piece in pieces:
            if len(pieces) > 1 and len(piece) >= 2:
                parts.append(self._stem(piece))
            parts.extend(self._parts(piece))
        translations: tuple[str, ...] = ()
        if stem not in self._known:
            dutch = self._lexicon.get(self._english(token), ())
            translations = tuple(t for nl in dutch for t in self._translated(nl))
        unique = tuple(dict.fromkeys(p for p in parts if p != stem))
        return Word(stem, unique, translations)

    def _translated(self, dutch: str) -> list[str]:
        return [self._stem(dutch), *self._parts(dutch)]

    def _split_word(self, word: str, budget: int) -> tuple[str, ...]:
        """A compound's parts (as written) at its most plausible cut; () when it is no compound.

        A cut scores its tail 2 when the KB uses the tail on its own and 1 when at least two
        KB words end with it, its head 2 when used on its own, 1.5 when it splits further
        and 0.5 when it is merely long; the best cut scoring at least 2.5 wins (ties: the
        longer tail).
        """
        if budget < 2 or len(word) < MIN_COMPOUND_CHARS:
            return ()
        best: tuple[float, tuple[str, ...]] = (0.0, ())
        parts: tuple[str, ...]
        for cut in range(MIN_HEAD_CHARS, len(word) - MIN_TAIL_CHARS + 1):
            ending = word[cut:]
            if ending in self._words:
                tail_score = 2.0
            elif ending in self._tails:
                tail_score = 1.0
            else:
                continue
            head = word[:cut]
            for link in ("", *LINKS):
                if link and not head.endswith(link):
                    continue
                bare = head[: len(head) - len(link)]
                if len(bare) < MIN_HEAD_CHARS or bare in PREFIXES:
                    continue
                if bare in self._words:
                    score, parts = tail_score + 2.0, (bare,)
                elif inner := self._split(bare, budget - 1):
                    score, parts = tail_score + 1.5, inner
                elif len(bare) >= MIN_UNKNOWN_HEAD_CHARS:
                    score, parts = tail_score + 0.5, (bare,)
                else:
                    continue
                if score > best[0]:
                    best = (score, (*parts, ending))
        return best[1] if best[0] >= 2.5 else ()

    def _split(self, word: str, budget: int) -> tuple[str, ...]:
        found = self._splits.get((word, budget))
        if found is None:
            found = self._split_word(word, budget)
            if len(self._splits) >= CACHE:
                self._splits.clear()
            self._splits[word, budget] = found
        return found

    def _parts(self, word: str) -> list[str]:
        """Stems of a word's compound parts ([] when it is no compound)."""
        return [self._stem(part) for part in self._split(word, MAX_PARTS)]
