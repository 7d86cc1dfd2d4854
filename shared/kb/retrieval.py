"""Local BM25 retrieval over topics: Dutch-aware terms, compound fallback, verbatim mentions.

Terms come from `shared.kb.analysis` (Snowball stems, compounds split against the KB's own
vocabulary, English words translated). Scores are BM25 (Lucene's idf, k1 = 1.2, b = 0.75),
computed per query from the raw term frequencies of `shared.kb.postings` (by the compiled
kernels of `shared.kb.kernels` from NUMBA_MIN_TOPICS topics on). Each hit also says how much
of the question it covers, which is what the relevance floor judges.
"""

from __future__ import annotations

import bisect
import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import itemgetter
from typing import NamedTuple

import numpy as np

from shared.kb import scoring
from shared.kb.analysis import Analyzer
from shared.kb.compound import MAX_EXPANSIONS, CompoundIndex
from shared.kb.corpus import analysing, counting_words, linking, term_matrix_steps
from shared.kb.models import KbInputError, TopicLike, kb_hash_of_sorted
from shared.kb.overlay import Layered
from shared.kb.postings import Postings
from shared.kb.reach import Reach, Terms, terms_of, word_counts
from shared.kb.steps import Steps, run_steps
from shared.kb.tokens import content_words, tokenize
from shared.kb.verbatim import Mentions
from shared.kb.vocab import Vocabulary, VocabView

COMPOUND_WEIGHT = 0.5
KNOWN_WORD_FACTOR = 0.5
KNOWN_WORD_EXPANSIONS = 8
PART_WEIGHT = 0.7  # a compound's part ("verlof" in "geboorteverlof") says less than the whole
KNOWN_PART_WEIGHT = 0.3  # ... and less still when the whole compound is itself a KB term
TRANSLATION_WEIGHT = 1.0
EXPANSION_CACHE = 4096
COMPACT_SHARE = 0.125  # delta postings or dead topics beyond this share: compact
MAX_QUERY_CHARS = 8000
DEFAULT_K = 10
# Below this share of a question's weight no topic is about the question: R42 says so.
MIN_COVERAGE = 0.30  # chosen on evals/retrieval (bench_retrieval_quality prints the trade-off)
_NO_TOPICS = np.zeros(0, dtype=np.int64)
SLICE_TOPICS = 256  # topics per slice of a build or update in steps


class Hit(NamedTuple):
    """One retrieved topic: id, BM25 score, verbatim mention, share of the question covered,
    and whether that share rests on more than one word mentioned in passing (`supported`)."""

    topic_id: str
    score: float
    verbatim: bool = False
    coverage: float = 1.0
    supported: bool = True

    @property
    def relevant(self) -> bool:
        """Whether this hit clears the relevance floor (a verbatim mention always does).

        The floor: the topic holds at least MIN_COVERAGE of the question's weight (idf of
        each content word, its best link), and that evidence is two or more of the
        question's words together, or one word the topic is about (occurring at least
        twice, as its label does), or the question's only word. A single word that a
        topic mentions once ("verzorgd" in the lunch text for a question about cacti) is
        a coincidence of vocabulary, not an answer.
        """
        return self.verbatim or (self.coverage >= MIN_COVERAGE and self.supported)


def is_relevant(hits: Iterable[Hit]) -> bool:
    """Whether any hit clears the relevance floor, i.e. the KB has something on the question."""
    return any(hit.relevant for hit in hits)


def _check_summaries(summaries: Mapping[str, str] | None) -> Mapping[str, str]:
    if summaries is None:
        return {}
    if not isinstance(summaries, Mapping):
        raise KbInputError("summaries must be a mapping of topic id → text")
    return summaries


def _check_topics(topics: Iterable[TopicLike] | Mapping[str, TopicLike]) -> list[TopicLike]:
    return run_steps(_checking_topics(topics))


def _checking_topics(
    topics: Iterable[TopicLike] | Mapping[str, TopicLike],
) -> Steps[list[TopicLike]]:
    if isinstance(topics, (str, bytes)) or not isinstance(topics, Iterable):
        raise KbInputError("RetrievalIndex.build needs an iterable of topics")
    listed = list(topics.values() if isinstance(topics, Mapping) else topics)
    seen: set[str] = set()
    for at, topic in enumerate(listed):
        topic_id = getattr(topic, "id", None)
        if not isinstance(topic_id, str) or not topic_id.strip():
            raise KbInputError(f"every topic needs a non-empty string id, got {topic_id!r}")
        if not isinstance(getattr(topic, "label", None), str):
            raise KbInputError(f"topic {topic_id!r} has no string label")
        if topic_id in seen:
            raise KbInputError(f"duplicate topic id {topic_id!r} in the knowledge base")
        seen.add(topic_id)
        if at % SLICE_TOPICS == SLICE_TOPICS - 1:
            yield None
    return listed


def _chunked[T, R](items: Sequence[T], fn: Callable[[Sequence[T]], Iterable[R]]) -> Steps[list[R]]:
    """fn over consecutive chunks of items, concatenated: one slice per chunk."""
    out: list[R] = []
    for start in range(0, len(items), SLICE_TOPICS * 8):
        out += fn(items[start : start + SLICE_TOPICS * 8])
        yield None
    return out


class RetrievalIndex:
    """An immutable BM25 index of one KB snapshot; `updated` derives the next one cheaply."""

    __slots__ = (
        "_analyzer",
        "_compound",
        "_compound_weight",
        "_dead",
        "_fingerprint",
        "_ids",
        "_lineage",
        "_mentions",
        "_numbers",
        "_postings",
        "_rank",
        "_reach_cache",
        "_sorted",
        "_split",
        "_vocab",
    )  # fmt: skip
    _analyzer: Analyzer
    _compound: CompoundIndex
    _compound_weight: float
    _dead: bool
    _reach_cache: Reach
    _fingerprint: str
    _ids: list[str]
    _lineage: Vocabulary
    _numbers: Layered[str, int]
    _mentions: Mentions
    _postings: Postings
    _rank: np.ndarray
    _sorted: list[str]
    _split: np.ndarray
    _vocab: VocabView

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
        return run_steps(cls.building(topics, summaries=summaries, compound_weight=compound_weight))

    @classmethod
    def building(
        cls,
        topics: Iterable[TopicLike],
        *,
        summaries: Mapping[str, str] | None = None,
        compound_weight: float = COMPOUND_WEIGHT,
    ) -> Steps[RetrievalIndex]:
        """`build` in steps (shared.kb.steps): Python slices of a few hundred topics or
        words, and the passes over the whole KB (matrices, postings, grams) as numpy
        callables a caller may run in a worker thread. The index is the one `build` gives.
        """
        summaries = _check_summaries(summaries)
        if not isinstance(compound_weight, (int, float)) or not 0.0 <= compound_weight <= 1.0:
            raise KbInputError(f"compound_weight must be within [0, 1], got {compound_weight!r}")
        listed = yield from _checking_topics(topics)
        words, counts = yield from counting_words(listed, summaries)
        analyzer = yield from Analyzer.building(words)
        lineage = Vocabulary()
        matrix, split_terms = yield from term_matrix_steps(words, counts, analyzer, lineage)
        del words, counts
        vocab = lineage.view()
        yield from analyzer.forgetting(vocab)  # the build's words: the query cache starts empty
        split = np.zeros(len(vocab), dtype=bool)
        split[split_terms] = True
        ids: list[str] = yield from _chunked(listed, lambda chunk: [t.id for t in chunk])
        # Sorted already when the topics come from the store in id order: one pass then.
        ordered = sorted(ids)
        yield None
        position: dict[str, int] = {}
        for start in range(0, len(ordered), SLICE_TOPICS * 8):
            end = min(start + SLICE_TOPICS * 8, len(ordered))
            position.update(zip(ordered[start:end], range(start, end), strict=True))
            yield None
        ranks = yield from _chunked(ids, lambda chunk: [position[i] for i in chunk])
        rank = np.asarray(ranks, dtype=np.int32).reshape(-1)
        del ranks
        numbers: dict[str, int] = {}
        for start in range(0, len(ids), SLICE_TOPICS * 8):
            end = min(start + SLICE_TOPICS * 8, len(ids))
            numbers.update(zip(ids[start:end], range(start, end), strict=True))
            yield None
        postings: Postings = yield lambda: Postings.from_matrix(matrix, len(vocab))
        mentions = yield from Mentions.collecting(listed)
        compound = yield from CompoundIndex.building(vocab)
        fingerprint: str = yield lambda: kb_hash_of_sorted(ordered)  # hashlib frees the GIL
        return cls._assemble(
            ids=ids,
            numbers=Layered.of(numbers),
            ordered=ordered,
            rank=rank,
            analyzer=analyzer,
            lineage=lineage,
            vocab=vocab,
            split=split,
            postings=postings,
            mentions=mentions,
            compound_weight=float(compound_weight),
            compound=compound,
            fingerprint=fingerprint,
        )

    @classmethod
    def _assemble(
        cls,
        *,
        ids: list[str],
        numbers: Layered[str, int],
        ordered: list[str],
        rank: np.ndarray,
        analyzer: Analyzer,
        lineage: Vocabulary,
        vocab: VocabView,
        split: np.ndarray,
        postings: Postings,
        mentions: Mentions,
        compound_weight: float,
        compound: CompoundIndex | None,
        fingerprint: str | None = None,
    ) -> RetrievalIndex:
        self = object.__new__(cls)
        self._compound_weight = compound_weight
        self._ids = ids  # per topic number; a changed or removed topic's stays until compaction
        self._numbers = numbers  # live topic id → topic number
        # ids in sorted order, and each topic's place in it: ties in score break by id,
        # whatever the build order; the sorted list also gives the KB hash without a sort.
        self._sorted = ordered
        self._rank = rank
        self._fingerprint = kb_hash_of_sorted(ordered) if fingerprint is None else fingerprint
        self._analyzer = analyzer
        self._lineage = lineage
        self._vocab = vocab
        self._split = split
        self._postings = postings
        self._dead = not postings.alive.all()  # mentions may name dead topics then
        self._mentions = mentions
        self._compound = CompoundIndex(self._vocab) if compound is None else compound
        # Chat questions repeat words; a per-index table of what each word reaches keeps
        # analysis and expansion off the hot path (shared.kb.reach; no reference back here).
        self._reach_cache = Reach()
        return self

    def updated(
        self,
        *,
        changed: Iterable[TopicLike] = (),
        removed: Iterable[str] = (),
        summaries: Mapping[str, str] | None = None,
    ) -> RetrievalIndex:
        """The index after these topics changed (or were added) and those were removed.

        Only the changed topics' text is analysed, and the lookups that follow the
        vocabulary (word hashes, compound grams) grow by the new words only; the postings
        of the others are carried over by numpy passes, and idf and length norms are
        recomputed for the new KB. Words new to the KB are split against the KB's words,
        as questions are. This index stays as it is (searches on it may go on meanwhile).
        """
        return run_steps(self.updating(changed=changed, removed=removed, summaries=summaries))

    def updating(
        self,
        *,
        changed: Iterable[TopicLike] = (),
        removed: Iterable[str] = (),
        summaries: Mapping[str, str] | None = None,
    ) -> Steps[RetrievalIndex]:
        """`updated` in steps (shared.kb.steps): Python slices of O(changed) work, and the
        passes over the whole KB (postings, mentions, compound grams, compaction) as
        numpy callables that a caller may run in a worker thread."""
        fresh = _check_topics(changed)
        summaries = _check_summaries(summaries)
        gone = [] if isinstance(removed, str) else list(removed)
        if isinstance(removed, str) or not all(isinstance(i, str) for i in gone):
            raise KbInputError("removed must be an iterable of topic ids")
        dropped = {*gone, *(topic.id for topic in fresh)}
        numbers = self._numbers
        dead = np.fromiter(
            (numbers[i] for i in dropped if i in numbers), dtype=np.int64, count=-1
        )  # fmt: skip
        words, counts = yield from counting_words(fresh, summaries)
        # Hashing the new words is brief; merging them into the KB's sorted hashes is numpy.
        analyzer: Analyzer = yield lambda: self._analyzer.extended(words, self._vocab)
        analysed = yield from analysing(words, analyzer)
        # Terms that another update of an older index added meanwhile keep their numbers
        # and stay empty columns here.
        matrix, split_terms, vocab = yield from linking(analysed, counts, self._lineage)
        split = np.zeros(len(vocab), dtype=bool)
        split[: len(self._split)] = self._split
        split[split_terms] = True
        first = len(self._ids)
        ids = [*self._ids, *(topic.id for topic in fresh)]
        numbers = yield from numbers.deriving(
            drop=dropped, put=((topic.id, first + at) for at, topic in enumerate(fresh))
        )
        ordered, rank = yield from self._reordering(dead, dropped, [topic.id for topic in fresh])
        yield None
        added = yield from Mentions.collecting(fresh)
        postings, mentions = yield lambda: (
            self._postings.appended(dead, matrix, len(vocab)),
            self._mentions.appended(added, first),
        )
        vocab = vocab.held(postings.df > 0)
        yield from analyzer.forgetting(vocab)
        compound = yield lambda: self._compound.extended(vocab)
        dead_share = 1.0 - postings.n_alive / max(postings.n_docs, 1)
        if max(postings.delta_share, dead_share) > COMPACT_SHARE:
            # Fold the delta and drop the dead topics: renumbers every topic, so only once
            # in a while (the updates since the last one paid for a share of the KB). One
            # pass over the KB, in numpy (and C-level list and dict builds of the ids).
            live = postings.alive
            postings, mentions = yield lambda: (
                postings.compacted(),
                mentions.spliced(live, Mentions.of(())),
            )
            ids = list(itertools.compress(ids, live.tolist()))
            yield None
            renumbered: dict[str, int] = {}
            for start in range(0, len(ids), SLICE_TOPICS * 8):
                end = min(start + SLICE_TOPICS * 8, len(ids))
                renumbered.update(zip(ids[start:end], range(start, end), strict=True))
                yield None
            numbers = Layered.of(renumbered)
            rank = rank[live]
        yield None
        fingerprint: str = yield lambda: kb_hash_of_sorted(ordered)  # hashlib frees the GIL
        return RetrievalIndex._assemble(
            fingerprint=fingerprint,
            ids=ids,
            numbers=numbers,
            ordered=ordered,
            rank=rank,
            analyzer=analyzer,
            lineage=self._lineage,
            vocab=vocab,
            split=split,
            postings=postings,
            mentions=mentions,
            compound_weight=self._compound_weight,
            compound=compound,
        )

    def _reordering(
        self, dead: np.ndarray, dropped: set[str], added: list[str]
    ) -> Steps[tuple[list[str], np.ndarray]]:
        """The sorted ids after an update, and each topic number's place among the live.

        Edits the sorted list in place of a re-sort: O(n) moves in C, O(changed) searches,
        in slices (shared.kb.steps).
        """
        keep = self._postings.alive.copy()
        keep[dead] = False
        dropped_ranks = np.sort(self._rank[dead])
        dense = self._rank[keep].astype(np.int64)
        dense -= np.searchsorted(dropped_ranks, dense)
        yield None
        old = self._sorted
        gone_at = []
        for topic_id in dropped:
            at = bisect.bisect_left(old, topic_id)
            if at < len(old) and old[at] == topic_id:
                gone_at.append(at)
        new_sorted = sorted(added)
        insert_at = [bisect.bisect_left(old, i) for i in new_sorted]
        yield None
        # One pass of slice copies (in C), not an insert or delete (a move of n) per id.
        ordered: list[str] = []
        copied = 0
        edits = sorted([*((at, 0, i) for at, i in zip(insert_at, new_sorted, strict=True)),
                        *((at, 1, "") for at in gone_at)])  # fmt: skip
        for number, (at, kind, topic_id) in enumerate(edits):
            ordered.extend(old[copied:at])
            if kind:
                copied = at + 1
            else:
                copied = at
                ordered.append(topic_id)
            if number % SLICE_TOPICS == SLICE_TOPICS - 1:
                yield None
        ordered.extend(old[copied:])
        yield None
        places = np.asarray(insert_at, dtype=np.int64)
        places -= np.searchsorted(np.sort(np.asarray(gone_at, dtype=np.int64)), places)
        new_rank = places + np.arange(len(new_sorted), dtype=np.int64)
        rank = np.zeros(len(keep) + len(added), dtype=np.int32)
        rank[: len(keep)][keep] = dense + np.searchsorted(places, dense, side="right")
        where = dict(zip(new_sorted, new_rank.tolist(), strict=True))
        rank[len(keep) :] = [where[i] for i in added]
        return ordered, rank

    def __len__(self) -> int:
        return len(self._numbers)

    @property
    def fingerprint(self) -> str:
        """The kb_hash of the topic ids this index was built from."""
        return self._fingerprint

    @property
    def topic_ids(self) -> tuple[str, ...]:
        """Indexed topic ids in build order (then in the order updates added them)."""
        alive = self._postings.alive.tolist()
        return tuple(i for i, live in zip(self._ids, alive, strict=True) if live)

    @property
    def vocabulary_size(self) -> int:
        """Number of distinct indexed terms."""
        return len(self._vocab)

    @property
    def sorted_ids(self) -> Sequence[str]:
        """Indexed topic ids in sorted order (do not modify)."""
        return self._sorted

    @property
    def nbytes(self) -> int:
        """Bytes held by the numeric arrays (postings, idf, compound, mention and word lookups)."""
        return (
            self._postings.nbytes + self._compound.nbytes + self._mentions.nbytes
            + self._analyzer.nbytes + int(self._split.nbytes)
        )  # fmt: skip

    def query_weights(self, query: str) -> dict[str, float]:
        """The weighted terms a query is scored with (for diagnostics and tests)."""
        found: dict[str, float] = {}
        query_terms = self._query(tokenize(query[:MAX_QUERY_CHARS]))
        for col, weight in zip(
            query_terms.cols.tolist(), query_terms.weights.tolist(), strict=True
        ):
            term = self._vocab[col]
            found[term] = found.get(term, 0.0) + weight
        return found

    def _reaching(self) -> Reach:
        """This index's table of what query words reach (a fresh one once it is full)."""
        reach = self._reach_cache
        if len(reach) >= EXPANSION_CACHE:
            reach = self._reach_cache = Reach()
        return reach

    def _reach(self, token: str) -> tuple[tuple[int, ...], tuple[float, ...], float]:
        """The terms one query word reaches, their factors, and the word's own weight (idf)."""
        word = self._analyzer.analyse(token)
        vocab = self._vocab
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
                factor = self._compound_weight
                related = self._compound.expand(word.stem, MAX_EXPANSIONS)
            else:
                factor = self._compound_weight * KNOWN_WORD_FACTOR
                # Compounds already split into parts hold this word as a term.
                expanded = self._compound.expand(word.stem, KNOWN_WORD_EXPANSIONS)
                related = tuple(col for col in expanded if not self._split[col])
            for col in related:
                if reached.get(col, 0.0) < factor:
                    reached[col] = factor
        idf = self._postings.idf
        if direct is not None:
            weight = float(idf[direct])
        elif reached:
            weight = max(float(idf[col]) for col in reached)
        else:
            weight = self._postings.unknown_idf()
        return tuple(reached), tuple(reached.values()), weight

    def _query(self, tokens: list[str]) -> Terms:
        """A query's term links: each word's reached terms, weighted by its repetition."""
        distinct, word_tf = word_counts(tokens)
        reach = self._reaching()
        numbers = reach.resolve(distinct, self._reach)
        return terms_of(reach.arrays, numbers, word_tf)

    def search(self, query: str, *, k: int = DEFAULT_K) -> list[Hit]:
        """Top-k topics for a query; topics named verbatim come first and always count."""
        if not isinstance(query, str):
            raise KbInputError(f"a search query must be a string, got {type(query).__name__}")
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise KbInputError(f"k must be a positive integer, got {k!r}")
        words = tokenize(query[:MAX_QUERY_CHARS], keep_stopwords=True)
        mentioned = self._mentions.find_words(tuple(words))
        if mentioned and self._dead:
            alive = self._postings.alive
            named = np.array([d for d in mentioned if alive[d]], dtype=np.int64)
        elif mentioned:
            named = np.fromiter(mentioned, dtype=np.int64, count=len(mentioned))
        else:
            named = _NO_TOPICS
        distinct, word_tf = word_counts(content_words(words))
        reach = self._reaching()
        numbers = reach.resolve(distinct, self._reach)
        want = max(k - len(named), 0)
        postings = self._postings
        if postings.n_docs >= scoring.NUMBA_MIN_TOPICS:
            entries = np.array(numbers, dtype=np.int64)
            ranked = scoring.search_words(
                postings, reach.arrays, entries, word_tf, self._rank, named, max(want, 1)
            )
        else:
            terms = terms_of(reach.arrays, numbers, word_tf)
            ranked = postings.search(
                (terms.cols, terms.weights, terms.concept, terms.factors),
                terms.concept_weight, self._rank, named, max(want, 1),
            )  # fmt: skip
        ids = self._ids
        hits: list[Hit] = []
        # Hits are built in C (map, itemgetter, tuple.__new__ with every field): as
        # comprehensions they took 3-5 µs, about a tenth of a typical search.
        if ranked.named:
            hits = list(map(
                tuple.__new__, itertools.repeat(Hit),
                zip(
                    [ids[d] for d in ranked.named], ranked.named_scores, itertools.repeat(True),
                    itertools.repeat(1.0), itertools.repeat(True),
                ),
            ))  # fmt: skip
        if not want or not ranked.docs:
            return hits
        docs = ranked.docs
        hits += map(
            tuple.__new__,
            itertools.repeat(Hit),
            zip(
                itemgetter(*docs)(ids) if len(docs) > 1 else (ids[docs[0]],),
                ranked.scores, itertools.repeat(False), ranked.coverage, ranked.supported,
            ),
        )  # fmt: skip
        return hits


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
        return run_steps(self.getting_or_building(topics, summaries=summaries))

    def getting_or_building(
        self, topics: Iterable[TopicLike], *, summaries: Mapping[str, str] | None = None
    ) -> Steps[RetrievalIndex]:
        """`get_or_build` in steps (shared.kb.steps; see RetrievalIndex.building)."""
        listed = yield from _checking_topics(topics)
        ids: list[str] = yield from _chunked(listed, lambda chunk: [t.id for t in chunk])
        ids.sort()  # one pass when the topics come in id order
        yield None
        fingerprint: str = yield lambda: kb_hash_of_sorted(ids)
        cached = self.get(fingerprint)
        if cached is not None:
            return cached
        index = yield from RetrievalIndex.building(listed, summaries=summaries)
        self.put(index)
        return index

    def invalidate(self) -> None:
        """Forget every index (e.g. on kb.updated that changed text but not ids)."""
        with self._lock:
            self._entries.clear()
