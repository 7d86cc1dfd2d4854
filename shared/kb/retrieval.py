"""Local BM25 retrieval over topics: Dutch-aware terms, compound fallback, verbatim mentions.

Terms come from `shared.kb.analysis` (Snowball stems, compounds split against the KB's own
vocabulary, English words translated). Scores are BM25 (Lucene's idf, k1 = 1.2, b = 0.75),
precomputed per term and topic at build time so a query only sums a few columns. Each hit
also says how much of the question it covers, which is what the relevance floor judges.
"""

from __future__ import annotations

import functools
import math
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from shared.kb.analysis import Analyzer
from shared.kb.compound import MAX_EXPANSIONS, CompoundIndex
from shared.kb.models import KbInputError, TopicLike, kb_hash
from shared.kb.tokens import STOPWORDS, tokenize

COMPOUND_WEIGHT = 0.5
KNOWN_WORD_FACTOR = 0.5
KNOWN_WORD_EXPANSIONS = 8
PART_WEIGHT = 0.7  # a compound's part ("verlof" in "geboorteverlof") says less than the whole
KNOWN_PART_WEIGHT = 0.3  # ... and less still when the whole compound is itself a KB term
TRANSLATION_WEIGHT = 1.0
INDEXED_PART_TF = 0.5
EXPANSION_CACHE = 4096
MAX_VERBATIM_WORDS = 12
LABEL_REPEAT = 2  # a topic's label says more about it than any sentence of its description
MAX_QUERY_CHARS = 8000
DEFAULT_K = 10
K1, B = 1.2, 0.75
# Below this share of a question's weight no topic is about the question: R42 says so.
MIN_COVERAGE = 0.35  # chosen on evals/retrieval (bench_retrieval_quality prints the trade-off)


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved topic: id, BM25 score, verbatim mention, and share of the question covered."""

    topic_id: str
    score: float
    verbatim: bool = False
    coverage: float = 1.0

    @property
    def relevant(self) -> bool:
        """Whether this hit clears the relevance floor (a verbatim mention always does)."""
        return self.verbatim or self.coverage >= MIN_COVERAGE


def is_relevant(hits: Iterable[Hit]) -> bool:
    """Whether any hit clears the relevance floor, i.e. the KB has something on the question."""
    return any(hit.relevant for hit in hits)


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
    """An immutable BM25 index of one KB snapshot; build once per kb.updated, query often."""

    __slots__ = (
        "_analyzer", "_compound", "_compound_weight", "_data", "_expand", "_fingerprint",
        "_idf", "_ids", "_indices", "_indptr", "_split", "_terms", "_unknown_idf", "_verbatim",
        "_verbatim_sizes", "_vocab",
    )  # fmt: skip
    _analyzer: Analyzer
    _compound: CompoundIndex
    _compound_weight: float
    _data: np.ndarray
    _expand: Callable[[str, int], tuple[int, ...]]
    _fingerprint: str
    _idf: np.ndarray
    _ids: list[str]
    _indices: np.ndarray
    _indptr: np.ndarray
    _split: np.ndarray
    _terms: list[str]
    _unknown_idf: float
    _verbatim: dict[tuple[str, ...], tuple[int, ...]]
    _verbatim_sizes: list[int]
    _vocab: dict[str, int]

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
        docs = [tokenize(_document(t, str(summaries.get(t.id) or ""))) for t in listed]
        self._analyzer = Analyzer({word for doc in docs for word in doc})
        self._build_matrix(docs)
        self._compound = CompoundIndex(self._terms, self._vocab)
        # Chat questions repeat words; a per-index cache keeps expansion off the hot path.
        self._expand = functools.lru_cache(maxsize=EXPANSION_CACHE)(self._compound.expand)
        return self

    def _build_matrix(self, docs: list[list[str]]) -> None:
        """BM25 weight of every (term, topic) pair, stored column-wise (one column per term)."""
        vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        counts: list[float] = []
        lengths = np.zeros(len(docs), dtype=np.float32)
        analyse = self._analyzer.analyse
        split: set[str] = set()  # compounds whose parts are indexed terms themselves
        for number, doc in enumerate(docs):
            terms: dict[str, float] = {}
            for token, count in Counter(doc).items():
                word = analyse(token)
                terms[word.stem] = terms.get(word.stem, 0.0) + count
                if word.parts:
                    split.add(word.stem)
                for part in word.parts:  # a part inside a compound counts for less
                    terms[part] = terms.get(part, 0.0) + INDEXED_PART_TF * count
            lengths[number] = sum(terms.values())
            for term, frequency in terms.items():
                cols.append(vocab.setdefault(term, len(vocab)))
                rows.append(number)
                counts.append(frequency)
        self._analyzer.forget()  # the build's words: the query cache starts empty
        term_of = np.asarray(cols, dtype=np.int32)
        doc_of = np.asarray(rows, dtype=np.int32)
        tf = np.asarray(counts, dtype=np.float32)
        order = np.argsort(term_of, kind="stable")  # stable: topics stay sorted per column
        term_of, doc_of, tf = term_of[order], doc_of[order], tf[order]
        df = np.bincount(term_of, minlength=len(vocab)).astype(np.float64)
        n = max(len(docs), 1)
        idf = np.log1p((n - df + 0.5) / (df + 0.5))
        average = float(lengths.mean()) if len(docs) else 0.0
        norm = K1 * (1 - B + B * lengths / (average or 1.0))
        weights = idf[term_of] * tf * (K1 + 1) / (tf + norm[doc_of])
        self._vocab = vocab
        self._terms = list(vocab)
        self._split = np.zeros(len(vocab), dtype=bool)
        self._split[[vocab[term] for term in split]] = True
        self._idf = idf.astype(np.float32)
        self._unknown_idf = float(np.log1p((n - 0.5) / 1.5))  # as rare as a one-topic word
        self._indptr = np.r_[0, np.cumsum(np.bincount(term_of, minlength=len(vocab)))].astype(
            np.int32
        )
        self._indices = doc_of
        self._data = weights.astype(np.float32)

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

    @property
    def nbytes(self) -> int:
        """Bytes held by the numeric arrays (postings, idf, compound lookups)."""
        arrays = (self._data, self._indices, self._indptr, self._idf)
        return sum(int(a.nbytes) for a in arrays) + self._compound.nbytes

    def query_weights(self, query: str) -> dict[str, float]:
        """The weighted terms a query is scored with (for diagnostics and tests)."""
        weights, _ = self._weights(query)
        return {self._terms[col]: float(w) for col, w in weights.items()}

    def _weights(self, query: str) -> tuple[dict[int, float], list[tuple[float, dict[int, float]]]]:
        """Term weights of a query, and per query word its weight and the terms it reached."""
        weights: dict[int, float] = {}
        concepts: list[tuple[float, dict[int, float]]] = []
        vocab, analyse = self._vocab, self._analyzer.analyse
        for token, count in Counter(tokenize(query)).items():
            word = analyse(token)
            reached: dict[int, float] = {}
            direct = vocab.get(word.stem)
            if direct is not None:
                reached[direct] = 1.0
            part_weight = PART_WEIGHT if direct is None else KNOWN_PART_WEIGHT
            for term, factor in (
                *((p, part_weight) for p in word.parts),
                *((t, TRANSLATION_WEIGHT) for t in word.translations),
            ):
                col = vocab.get(term)
                if col is not None and reached.get(col, 0.0) < factor:
                    reached[col] = factor
            if self._compound_weight:
                # A word the KB also uses on its own ("verlof") still reaches a few of its
                # compounds ("ouderschapsverlof"), at half the weight of an unknown word's.
                if direct is None:
                    factor, related = self._compound_weight, self._expand(word.stem, MAX_EXPANSIONS)
                else:
                    factor = self._compound_weight * KNOWN_WORD_FACTOR
                    # Compounds already split into parts hold this word as a term.
                    related = tuple(
                        col
                        for col in self._expand(word.stem, KNOWN_WORD_EXPANSIONS)
                        if not self._split[col]
                    )
                for col in related:
                    if reached.get(col, 0.0) < factor:
                        reached[col] = factor
            tf = 1.0 + math.log(count)
            for col, factor in reached.items():
                weights[col] = weights.get(col, 0.0) + tf * factor
            if direct is not None:
                weight = float(self._idf[direct])
            elif reached:
                weight = max(float(self._idf[col]) for col in reached)
            else:
                weight = self._unknown_idf
            concepts.append((weight * tf, reached))
        # A word the KB never uses counts as much as the question's most specific KB word,
        # not more: in a small KB every shared word is common and would drown otherwise.
        known = [weight for weight, reached in concepts if reached]
        if known:
            cap = max(known)
            concepts = [(w if reached else min(w, cap), reached) for w, reached in concepts]
        return weights, concepts

    def _scores(self, weights: dict[int, float]) -> np.ndarray:
        """BM25 scores of every topic: one vectorised gather over the terms' postings."""
        cols = np.fromiter(weights.keys(), dtype=np.int64, count=len(weights))
        values = np.fromiter(weights.values(), dtype=np.float32, count=len(weights))
        starts, sizes = self._indptr[cols], self._indptr[cols + 1] - self._indptr[cols]
        total = int(sizes.sum())
        # Positions of every posting of every query term, without a Python loop.
        offsets = np.repeat(starts - (np.cumsum(sizes) - sizes), sizes) + np.arange(total)
        contributions = self._data[offsets] * np.repeat(values, sizes)
        return np.bincount(self._indices[offsets], contributions, minlength=len(self._ids))

    def _coverage(
        self, docs: list[int], concepts: list[tuple[float, dict[int, float]]]
    ) -> list[float]:
        """Share of the question's word weight each topic matches (fuzzy matches count less)."""
        total = sum(weight for weight, _ in concepts)
        if not docs or not total:
            return [0.0] * len(docs)
        links = [
            (c, col, f) for c, (_, reached) in enumerate(concepts) for col, f in reached.items()
        ]
        if not links:
            return [0.0] * len(docs)
        concept_of, col_of, factor_of = (np.asarray(column) for column in zip(*links, strict=True))
        starts = self._indptr[col_of]
        sizes = self._indptr[col_of + 1] - starts
        offsets = np.repeat(starts - (np.cumsum(sizes) - sizes), sizes) + np.arange(sizes.sum())
        found = self._indices[offsets]
        wanted = np.sort(np.asarray(docs, dtype=np.int32))
        where = np.minimum(np.searchsorted(wanted, found), len(wanted) - 1)
        hit = wanted[where] == found
        best = np.zeros((len(concepts), len(wanted)))
        link_of = np.repeat(np.arange(len(links)), sizes)[hit]
        np.maximum.at(best, (concept_of[link_of], where[hit]), factor_of[link_of])
        weights = np.asarray([weight for weight, _ in concepts])
        share = dict(zip(wanted.tolist(), (weights @ best / total).tolist(), strict=True))
        return [share[d] for d in docs]

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
        weights, concepts = self._weights(query)
        scores = self._scores(weights) if weights else np.zeros(len(self._ids))
        ids = self._ids
        named = sorted(mentioned, key=lambda d: (-float(scores[d]), ids[d]))
        hits = [Hit(ids[d], float(scores[d]), True) for d in named]
        want = k - len(named)
        ranked: list[int] = []
        if want > 0:
            scores[list(mentioned)] = 0.0
            candidates = np.flatnonzero(scores > 0)
            if len(candidates) > want:
                # Everything tied with the want-th best stays in so ties break by id, not by
                # argpartition's arbitrary order.
                cut = np.partition(scores[candidates], len(candidates) - want)
                candidates = candidates[scores[candidates] >= cut[len(candidates) - want]]
            ranked = sorted(candidates.tolist(), key=lambda d: (-float(scores[d]), ids[d]))[:want]
        coverage = self._coverage(ranked, concepts)
        hits.extend(
            Hit(ids[d], float(scores[d]), False, c) for d, c in zip(ranked, coverage, strict=True)
        )
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
