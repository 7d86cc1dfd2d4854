"""Local TF-IDF retrieval over topics, with a compound-word fallback and verbatim mentions."""

from __future__ import annotations

import functools
import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from shared.kb.compound import MAX_EXPANSIONS, CompoundIndex
from shared.kb.models import KbInputError, TopicLike, kb_hash
from shared.kb.tokens import STOPWORDS, tokenize
from shared.kb.vocab import Vocabulary

COMPOUND_WEIGHT = 0.5
KNOWN_WORD_FACTOR = 0.5
KNOWN_WORD_EXPANSIONS = 8
EXPANSION_CACHE = 4096
MAX_VERBATIM_WORDS = 12
LABEL_REPEAT = 2  # a topic's label says more about it than any sentence of its description
MAX_QUERY_CHARS = 8000
DEFAULT_K = 10


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved topic: its id, cosine score, and whether the query named it verbatim."""

    topic_id: str
    score: float
    verbatim: bool = False


def _document(topic: TopicLike, summary: str) -> str:
    label = topic.label or ""
    parts = [topic.id, *([label] * LABEL_REPEAT), topic.description or "", summary]
    return "\n".join(parts)


def _check_topics(topics: Iterable[TopicLike] | Mapping[str, TopicLike]) -> list[TopicLike]:
    if isinstance(topics, (str, bytes)) or not isinstance(topics, Iterable):
        raise KbInputError("RetrievalIndex.build needs an iterable of topics")
    listed = list(topics.values() if isinstance(topics, Mapping) else topics)
    seen: set[str] = set()
    for topic in listed:
        topic_id = getattr(topic, "id", None)
        if not isinstance(topic_id, str) or not topic_id.strip():
            raise KbInputError(f"every topic needs a non-empty string id, got {topic_id!r}")
        if not isinstance(getattr(topic, "label", None), str):
            raise KbInputError(f"topic {topic_id!r} has no string label")
        if topic_id in seen:
            raise KbInputError(f"duplicate topic id {topic_id!r} in the knowledge base")
        seen.add(topic_id)
    return listed


class RetrievalIndex:
    """An immutable TF-IDF index of one KB snapshot; build once per kb.updated, query often."""

    __slots__ = (
        "_compound", "_compound_weight", "_data", "_expand", "_fingerprint", "_idf", "_ids",
        "_indices", "_indptr", "_terms", "_verbatim", "_verbatim_sizes", "_vocab",
    )  # fmt: skip

    def __init__(self) -> None:
        raise TypeError("use RetrievalIndex.build(topics, summaries=...)")

    @classmethod
    def build(
        cls,
        topics: Iterable[TopicLike],
        *,
        summaries: Mapping[str, str] | None = None,
        compound_weight: float = COMPOUND_WEIGHT,
    ) -> RetrievalIndex:
        """Index each topic's id, label, description and optional content summary."""
        # Imported here: scikit-learn is slow to import and chunking callers never need it.
        from sklearn.feature_extraction.text import TfidfVectorizer

        listed = _check_topics(topics)
        summaries = {} if summaries is None else summaries
        if not isinstance(summaries, Mapping):
            raise KbInputError("summaries must be a mapping of topic id → text")
        if not isinstance(compound_weight, (int, float)) or not 0.0 <= compound_weight <= 1.0:
            raise KbInputError(f"compound_weight must be within [0, 1], got {compound_weight!r}")
        self = object.__new__(cls)
        self._compound_weight = float(compound_weight)
        self._ids = [topic.id for topic in listed]
        self._fingerprint = kb_hash(self._ids)
        self._verbatim = _verbatim_index(listed)
        self._verbatim_sizes = sorted({len(sequence) for sequence in self._verbatim})
        docs = [_document(topic, str(summaries.get(topic.id) or "")) for topic in listed]
        vectorizer = TfidfVectorizer(analyzer=tokenize, sublinear_tf=True, dtype=np.float32)
        self._vocab, self._terms = {}, []
        self._idf = np.zeros(0, dtype=np.float32)
        self._indptr = np.zeros(1, dtype=np.int32)
        self._indices = np.zeros(0, dtype=np.int32)
        self._data = np.zeros(0, dtype=np.float32)
        try:
            matrix = vectorizer.fit_transform(docs).tocsc() if docs else None
        except ValueError as exc:  # every topic is empty: nothing to index, verbatim still works
            if "empty vocabulary" not in str(exc):
                raise
            matrix = None
        if matrix is not None:
            self._vocab = {term: int(col) for term, col in vectorizer.vocabulary_.items()}
            self._terms = vectorizer.get_feature_names_out().tolist()
            self._idf = vectorizer.idf_.astype(np.float32)
            self._indptr, self._indices, self._data = matrix.indptr, matrix.indices, matrix.data
        terms = Vocabulary()  # the current CompoundIndex reads a vocabulary view
        for term in self._terms:
            terms.add(term)  # in column order: term numbers are the columns
        self._compound = CompoundIndex(terms.view())
        # Chat questions repeat words; a per-index cache keeps expansion off the hot path.
        self._expand = functools.lru_cache(maxsize=EXPANSION_CACHE)(self._compound.expand)
        return self

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def fingerprint(self) -> str:
        """The kb_hash of the topic ids this index was built from."""
        return self._fingerprint

    @property
    def topic_ids(self) -> tuple[str, ...]:
        """Indexed topic ids in build order."""
        return tuple(self._ids)

    @property
    def vocabulary_size(self) -> int:
        """Number of distinct indexed terms."""
        return len(self._terms)

    def query_weights(self, query: str) -> dict[str, float]:
        """The weighted terms a query is scored with (for diagnostics and tests)."""
        return {self._terms[col]: float(w) for col, w in self._weights(query).items()}

    def _weights(self, query: str) -> dict[int, float]:
        weights: dict[int, float] = {}
        for token, count in Counter(tokenize(query)).items():
            tf = 1.0 + math.log(count)
            col = self._vocab.get(token)
            if col is not None:
                weights[col] = weights.get(col, 0.0) + tf * float(self._idf[col])
            if not self._compound_weight:
                continue
            # A word the KB also uses on its own ("verlof") still reaches a few of its
            # compounds ("ouderschapsverlof"), at half the weight of an unknown word's.
            if col is None:
                factor, related = self._compound_weight, self._expand(token, MAX_EXPANSIONS)
            else:
                factor = self._compound_weight * KNOWN_WORD_FACTOR
                related = self._expand(token, KNOWN_WORD_EXPANSIONS)
            for other in related:
                extra = factor * tf * float(self._idf[other])
                weights[other] = weights.get(other, 0.0) + extra
        return weights

    def _scores(self, weights: dict[int, float]) -> np.ndarray:
        """Cosine scores of every topic: one vectorised gather over the terms' postings."""
        cols = np.fromiter(weights.keys(), dtype=np.int64, count=len(weights))
        values = np.fromiter(weights.values(), dtype=np.float64, count=len(weights))
        values /= math.sqrt(float(values @ values)) or 1.0
        starts, sizes = self._indptr[cols], self._indptr[cols + 1] - self._indptr[cols]
        total = int(sizes.sum())
        # Positions of every posting of every query term, without a Python loop.
        offsets = np.repeat(starts - (np.cumsum(sizes) - sizes), sizes) + np.arange(total)
        contributions = self._data[offsets] * np.repeat(values, sizes)
        return np.bincount(self._indices[offsets], contributions, minlength=len(self._ids))

    def _mentions(self, query: str) -> set[int]:
        words = tuple(tokenize(query, keep_stopwords=True))
        found: set[int] = set()
        for size in self._verbatim_sizes:
            for start in range(len(words) - size + 1):
                found.update(self._verbatim.get(words[start : start + size], ()))
        return found

    def search(self, query: str, *, k: int = DEFAULT_K) -> list[Hit]:
        """Top-k topics for a query; topics named verbatim come first and always count."""
        if not isinstance(query, str):
            raise KbInputError(f"a search query must be a string, got {type(query).__name__}")
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise KbInputError(f"k must be a positive integer, got {k!r}")
        query = query[:MAX_QUERY_CHARS]
        mentioned = self._mentions(query)
        weights = self._weights(query)
        scores = self._scores(weights) if weights else np.zeros(len(self._ids))
        ids = self._ids
        named = sorted(mentioned, key=lambda d: (-float(scores[d]), ids[d]))
        hits = [Hit(ids[d], float(scores[d]), True) for d in named]
        want = k - len(hits)
        if want <= 0:
            return hits
        scores[list(mentioned)] = 0.0
        candidates = np.flatnonzero(scores > 0)
        if len(candidates) > want:
            # Everything tied with the want-th best stays in so ties break by id, not by
            # argpartition's arbitrary order.
            cut = np.partition(scores[candidates], len(candidates) - want)[len(candidates) - want]
            candidates = candidates[scores[candidates] >= cut]
        ranked = sorted(candidates.tolist(), key=lambda d: (-float(scores[d]), ids[d]))
        hits.extend(Hit(ids[d], float(scores[d]), False) for d in ranked[:want])
        return hits


def _verbatim_index(topics: list[TopicLike]) -> dict[tuple[str, ...], tuple[int, ...]]:
    """Word sequence → topic numbers, for every topic label and id."""
    index: dict[tuple[str, ...], tuple[int, ...]] = {}
    for doc, topic in enumerate(topics):
        sequences = {tuple(tokenize(text, keep_stopwords=True)) for text in (topic.id, topic.label)}
        for sequence in sequences:
            # A label made only of stopwords ("Het") would match nearly every message, and
            # a very long one is never typed out verbatim.
            if not sequence or len(sequence) > MAX_VERBATIM_WORDS:
                continue
            if all(word in STOPWORDS for word in sequence):
                continue
            index[sequence] = (*index.get(sequence, ()), doc)
    return index


class IndexCache:
    """Keeps the most recent indexes by kb_hash so a KB snapshot is indexed once."""

    def __init__(self, *, max_entries: int = 2) -> None:
        if not isinstance(max_entries, int) or max_entries < 1:
            raise KbInputError(f"max_entries must be a positive integer, got {max_entries!r}")
        self._max = max_entries
        self._entries: OrderedDict[str, RetrievalIndex] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, fingerprint: str) -> RetrievalIndex | None:
        """The cached index for a kb_hash, if any."""
        with self._lock:
            index = self._entries.get(fingerprint)
            if index is not None:
                self._entries.move_to_end(fingerprint)
            return index

    def put(self, index: RetrievalIndex) -> None:
        """Cache an index under its fingerprint, evicting the least recently used."""
        with self._lock:
            self._entries[index.fingerprint] = index
            self._entries.move_to_end(index.fingerprint)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)

    def get_or_build(
        self, topics: Iterable[TopicLike], *, summaries: Mapping[str, str] | None = None
    ) -> RetrievalIndex:
        """The cached index for these topics' kb_hash, building it on a miss."""
        listed = _check_topics(topics)
        cached = self.get(kb_hash(topic.id for topic in listed))
        if cached is not None:
            return cached
        index = RetrievalIndex.build(listed, summaries=summaries)
        self.put(index)
        return index

    def invalidate(self) -> None:
        """Forget every index (e.g. on kb.updated that changed text but not ids)."""
        with self._lock:
            self._entries.clear()
