"""The numeric core of retrieval: term-major postings with raw term frequencies, scored as BM25.

Postings are stored column-wise (one column per term, topics ascending), like a CSC sparse
matrix: `indptr` over terms, `docs` (uint16 while a KB has fewer than 65,536 topics, else
int32) and `tf2`, twice the term frequency as uint8 (frequencies are whole counts plus half
counts for compound parts; BM25 saturates long before 127). Keeping raw frequencies instead
of precomputed weights costs three vector operations per query, takes a quarter of the
memory, and lets an update change idf and document lengths without touching the postings.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from shared.kb import scoring
from shared.kb.scoring import K1, TF_SCALE, B

MAX_TF2 = 255
REPEAT_CHUNK = 1 << 18  # postings per np.repeat call (it holds the GIL: ~1 ms per chunk)


def _repeat(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """np.repeat(values, counts), a chunk of output at a time.

    np.repeat holds the GIL for its whole run (50-90 ms for the 3.7 million postings of a
    50k-topic KB, measured against a probe thread), so a compaction in a worker thread
    stalled the event loop that long. Between chunks the GIL can change hands.
    """
    ends = np.cumsum(counts, dtype=np.int64)
    total = int(ends[-1]) if len(ends) else 0
    if total <= REPEAT_CHUNK:
        return np.repeat(values, counts)
    out = np.empty(total, dtype=values.dtype)
    cuts = np.searchsorted(ends, np.arange(REPEAT_CHUNK, total, REPEAT_CHUNK), side="right")
    start = 0
    for stop in (*cuts.tolist(), len(values)):
        first = int(ends[start - 1]) if start else 0
        out[first : int(ends[stop - 1]) if stop else 0] = np.repeat(
            values[start:stop], counts[start:stop]
        )
        start = stop
    return out


def _running_total(flags: np.ndarray, out: np.ndarray) -> None:
    """out[:] = cumulative sum of a bool array, without holding the GIL.

    A cumsum that casts (bool to int64) or writes in place runs numpy's buffered loop,
    which holds the GIL throughout (57-86 ms at 3.7 million postings); a cast first,
    then a cumsum into another array, releases it.
    """
    np.cumsum(flags.astype(np.int64), out=out)


def _doc_dtype(n_docs: int) -> type[np.unsignedinteger] | type[np.signedinteger]:
    return np.uint16 if n_docs <= np.iinfo(np.uint16).max else np.int32


@dataclass(frozen=True, slots=True)
class Postings:
    """Immutable BM25 postings of one KB snapshot (see the module docstring).

    Two segments: the base (the last build or compaction) and a delta holding the topics
    added since, numbered after the base's. A changed or removed topic is only marked
    dead; its postings stay until `spliced` compacts both segments into a new base. So an
    update costs its own topics plus vector passes over per-term and per-topic arrays,
    never a rewrite of the KB's postings.
    """

    indptr: np.ndarray  # int64, n_terms + 1
    docs: np.ndarray  # topic number of each posting, ascending within a term
    tf2: np.ndarray  # uint8
    lengths: np.ndarray  # float32 per topic number: sum of its term frequencies
    idf: np.ndarray  # float32 per term (Lucene's BM25 idf over the live topics)
    norm: np.ndarray  # float32 per topic: K1 * (1 - B + B * length / average length)
    alive: np.ndarray  # bool per topic number: False once changed or removed
    df: np.ndarray  # int32 per term: live topics holding it
    delta: tuple[np.ndarray, np.ndarray, np.ndarray]  # indptr, docs (int32), tf2
    n_base: int  # topic numbers below this are the base's, the others the delta's

    @classmethod
    def from_matrix(cls, matrix: sp.csc_array | sp.csc_matrix, n_terms: int) -> Postings:
        """Postings of a (topics × terms) matrix of term frequencies."""
        csc = sp.csc_array(matrix)
        csc.sort_indices()
        n_docs = csc.shape[0]
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        indptr[: len(csc.indptr)] = csc.indptr
        indptr[len(csc.indptr) :] = csc.indptr[-1]
        tf2 = np.minimum(np.rint(csc.data * TF_SCALE), MAX_TF2).astype(np.uint8)
        lengths = np.asarray(csc.sum(axis=1), dtype=np.float32).ravel()
        docs = csc.indices.astype(_doc_dtype(n_docs))
        return cls.assemble(indptr, docs, tf2, lengths)

    @classmethod
    def assemble(
        cls, indptr: np.ndarray, docs: np.ndarray, tf2: np.ndarray, lengths: np.ndarray
    ) -> Postings:
        """Base-only postings with their idf and length norms computed from the frequencies."""
        n_terms = len(indptr) - 1
        empty = (
            np.zeros(n_terms + 1, dtype=np.int64), np.zeros(0, np.int32), np.zeros(0, np.uint8)
        )  # fmt: skip
        alive = np.ones(len(lengths), dtype=bool)
        df = np.diff(indptr).astype(np.int32)
        return cls._weighed(indptr, docs, tf2, lengths, alive, df, empty, len(lengths))

    @classmethod
    def _weighed(
        cls,
        indptr: np.ndarray,
        docs: np.ndarray,
        tf2: np.ndarray,
        lengths: np.ndarray,
        alive: np.ndarray,
        df: np.ndarray,
        delta: tuple[np.ndarray, np.ndarray, np.ndarray],
        n_base: int,
    ) -> Postings:
        n_alive = int(alive.sum())
        n = max(n_alive, 1)
        df64 = df.astype(np.float64)
        idf = np.log1p((n - df64 + 0.5) / (df64 + 0.5)).astype(np.float32)
        live = lengths[alive]
        average = float(live.mean()) if n_alive else 0.0
        norm = (K1 * (1 - B + B * lengths / (average or 1.0))).astype(np.float32)
        return cls(indptr, docs, tf2, lengths, idf, norm, alive, df, delta, n_base)

    @property
    def n_docs(self) -> int:
        """Number of topic numbers (live and dead)."""
        return len(self.lengths)

    @property
    def n_alive(self) -> int:
        """Number of live topics."""
        return int(self.alive.sum())

    @property
    def delta_share(self) -> float:
        """Postings in the delta segment per posting in the base (compaction is due above ~⅛)."""
        return len(self.delta[1]) / max(len(self.docs), 1)

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        arrays = (
            self.indptr, self.docs, self.tf2, self.lengths, self.idf, self.norm, self.alive,
            self.df, *self.delta,
        )  # fmt: skip
        return sum(int(a.nbytes) for a in arrays)

    def unknown_idf(self) -> float:
        """The idf of a word no topic uses (as rare as a one-topic word)."""
        return float(np.log1p((max(self.n_alive, 1) - 0.5) / 1.5))

    def search(
        self,
        links: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
        concept_weight: np.ndarray,
        rank: np.ndarray,
        named: np.ndarray,
        k: int,
    ) -> scoring.Ranked:
        """Best k live topics for weighted term links, their coverage; named ones not in the k."""
        return scoring.search(self, links, concept_weight, rank, named, k)

    def appended(
        self, dead: np.ndarray, added: sp.csc_array | sp.csc_matrix, n_terms: int
    ) -> Postings:
        """These postings with the topics numbered `dead` marked dead and `added` appended.

        Cost: the added topics, the delta segment, one gather over the base's topic
        numbers (to find the dead topics' terms) and passes over per-term arrays.
        """
        new = sp.csc_array(added)
        new.sort_indices()
        grow = n_terms - (len(self.indptr) - 1)
        indptr = np.concatenate([self.indptr, np.full(grow, self.indptr[-1], dtype=np.int64)])
        df = np.concatenate([self.df, np.zeros(grow, dtype=np.int32)])
        alive = np.concatenate([self.alive, np.ones(new.shape[0], dtype=bool)])
        dead = dead[self.alive[dead]] if len(dead) else dead
        if len(dead):
            alive[dead] = False
            is_dead = np.zeros(self.n_docs, dtype=bool)
            is_dead[dead] = True
            # The dead topics' terms: their postings in either segment.
            d_indptr, d_docs, _ = self.delta
            hit = np.flatnonzero(is_dead[self.docs])
            terms = np.searchsorted(self.indptr, hit, side="right") - 1
            d_hit = np.flatnonzero(is_dead[d_docs])
            d_terms = np.searchsorted(d_indptr, d_hit, side="right") - 1
            np.subtract.at(df, np.concatenate([terms, d_terms]), 1)
        new_terms = _repeat(np.arange(new.shape[1], dtype=np.int64), np.diff(new.indptr))
        df[: new.shape[1]] += np.diff(new.indptr).astype(np.int32)
        # The delta segment again, with the added topics after the previous delta's.
        d_indptr, d_docs, d_tf2 = self.delta
        old_terms = _repeat(np.arange(len(d_indptr) - 1, dtype=np.int64), np.diff(d_indptr))
        terms_all = np.concatenate([old_terms, new_terms])
        docs_all = np.concatenate([d_docs, new.indices.astype(np.int32) + self.n_docs])
        new_tf2 = np.minimum(np.rint(new.data * TF_SCALE), MAX_TF2).astype(np.uint8)
        tf2_all = np.concatenate([d_tf2, new_tf2])
        order = np.argsort(terms_all, kind="stable")  # previous delta first, then added
        delta_indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms_all, minlength=n_terms), out=delta_indptr[1:])
        delta = (delta_indptr, docs_all[order], tf2_all[order])
        lengths = np.concatenate(
            [self.lengths, np.asarray(new.sum(axis=1), dtype=np.float32).ravel()]
        )
        return Postings._weighed(
            indptr, self.docs, self.tf2, lengths, alive, df, delta, self.n_base
        )

    def compacted(self) -> Postings:
        """One base segment of the live topics, renumbered in order (base ones, then delta)."""
        n_base = self.n_base
        d_indptr, d_docs, d_tf2 = self.delta
        terms = _repeat(np.arange(len(d_indptr) - 1, dtype=np.int64), np.diff(d_indptr))
        rows = sp.csr_array(
            (d_tf2.astype(np.float32) / TF_SCALE, (d_docs.astype(np.int64) - n_base, terms)),
            shape=(self.n_docs - n_base, len(d_indptr) - 1),
        )
        live = self.alive[n_base:]
        base = Postings.assemble(self.indptr, self.docs, self.tf2, self.lengths[:n_base])
        return base.spliced(
            self.alive[:n_base], rows[live], len(self.indptr) - 1, self.lengths[n_base:][live]
        )

    def spliced(
        self,
        keep: np.ndarray,
        added: sp.csc_array | sp.csc_matrix | sp.csr_array,
        n_terms: int,
        added_lengths: np.ndarray | None = None,
    ) -> Postings:
        """These postings without the topics not in `keep` (a bool mask), plus `added`'s.

        Kept topics are renumbered in order; added ones follow them. Each posting is moved
        straight to its new place (no sort): kept postings stay in term order and shift by
        the added postings of the terms before theirs. Pure numpy passes, which release the
        GIL, so a search on the event loop runs while an update splices.
        """
        old_terms = len(self.indptr) - 1
        alive = keep[self.docs]
        alive_before = np.zeros(len(alive) + 1, dtype=np.int64)
        _running_total(alive, alive_before[1:])
        kept_counts = np.zeros(n_terms, dtype=np.int64)
        kept_counts[:old_terms] = alive_before[self.indptr[1:]] - alive_before[self.indptr[:-1]]
        new = sp.csc_array(added)
        new.sort_indices()
        new_counts = np.zeros(n_terms, dtype=np.int64)
        new_counts[: new.shape[1]] = np.diff(new.indptr)
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(kept_counts + new_counts, out=indptr[1:])
        n_kept = int(keep.sum())
        dtype = _doc_dtype(n_kept + new.shape[0])
        docs = np.empty(int(indptr[-1]), dtype=dtype)
        tf2 = np.empty(int(indptr[-1]), dtype=np.uint8)
        # Kept posting i of term t lands at i + (added postings of terms before t).
        added_before = indptr[:-1] - np.concatenate(([0], np.cumsum(kept_counts)[:-1]))
        at = np.arange(int(alive_before[-1]), dtype=np.int64)
        at += _repeat(added_before, kept_counts)
        renumber = np.cumsum(keep, dtype=np.int64) - 1
        docs[at] = renumber[self.docs[alive]]
        tf2[at] = self.tf2[alive]
        # Added posting j of term t lands after the kept ones of t.
        new_first = np.concatenate(([0], np.cumsum(new_counts)[:-1]))
        at = np.arange(new.nnz, dtype=np.int64)
        at += _repeat(indptr[:-1] + kept_counts - new_first, new_counts)
        docs[at] = new.indices.astype(np.int64) + n_kept
        tf2[at] = np.minimum(np.rint(new.data * TF_SCALE), MAX_TF2).astype(np.uint8)
        if added_lengths is None:
            added_lengths = np.asarray(new.sum(axis=1), dtype=np.float32).ravel()
        lengths = np.concatenate([self.lengths[keep], added_lengths.astype(np.float32)])
        return Postings.assemble(indptr, docs, tf2, lengths)
