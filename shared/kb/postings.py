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

from shared.kb import kernels
from shared.kb.kernels import K1, TF_SCALE, B

MAX_TF2 = 255


def _doc_dtype(n_docs: int) -> type[np.unsignedinteger] | type[np.signedinteger]:
    return np.uint16 if n_docs <= np.iinfo(np.uint16).max else np.int32


@dataclass(frozen=True, slots=True)
class Postings:
    """Immutable BM25 postings of one KB snapshot (see the module docstring)."""

    indptr: np.ndarray  # int64, n_terms + 1
    docs: np.ndarray  # topic number of each posting, ascending within a term
    tf2: np.ndarray  # uint8
    lengths: np.ndarray  # float32 per topic: sum of its term frequencies
    idf: np.ndarray  # float32 per term (Lucene's BM25 idf)
    norm: np.ndarray  # float32 per topic: K1 * (1 - B + B * length / average length)

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
        """Postings with their idf and length norms computed from the frequencies."""
        n_docs = len(lengths)
        df = np.diff(indptr).astype(np.float64)
        n = max(n_docs, 1)
        idf = np.log1p((n - df + 0.5) / (df + 0.5)).astype(np.float32)
        average = float(lengths.mean()) if n_docs else 0.0
        norm = (K1 * (1 - B + B * lengths / (average or 1.0))).astype(np.float32)
        return cls(indptr, docs, tf2, lengths, idf, norm)

    @property
    def n_docs(self) -> int:
        """Number of topics."""
        return len(self.lengths)

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays."""
        arrays = (self.indptr, self.docs, self.tf2, self.lengths, self.idf, self.norm)
        return sum(int(a.nbytes) for a in arrays)

    def unknown_idf(self) -> float:
        """The idf of a word no topic uses (as rare as a one-topic word)."""
        return float(np.log1p((max(self.n_docs, 1) - 0.5) / 1.5))

    def top(
        self, cols: np.ndarray, weights: np.ndarray, rank: np.ndarray, named: np.ndarray, k: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(best k topics, their scores, the named topics' scores); named ones not in the k."""
        return kernels.score_top(
            self.indptr, self.docs, self.tf2, self.idf, self.norm, cols, weights, rank, named, k
        )

    def coverage(
        self,
        top: np.ndarray,
        links: tuple[np.ndarray, np.ndarray, np.ndarray],
        concept_weight: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per top topic: concept-weight share, concepts matched, highest tf2 (see kernels)."""
        concept, col, factor = links
        return kernels.coverage(
            self.indptr, self.docs, self.tf2, top, concept, col, factor, concept_weight
        )

    def spliced(
        self, keep: np.ndarray, added: sp.csc_array | sp.csc_matrix, n_terms: int
    ) -> Postings:
        """These postings without the topics not in `keep` (a bool mask), plus `added`'s.

        Kept topics are renumbered in order; added ones follow them. Pure array work (no
        Python loop over postings), so an update costs little more than its new text.
        """
        old_terms = len(self.indptr) - 1
        term = np.repeat(np.arange(old_terms, dtype=np.int64), np.diff(self.indptr))
        alive = keep[self.docs]
        renumber = np.cumsum(keep, dtype=np.int64) - 1
        n_kept = int(keep.sum())
        new = sp.csc_array(added)
        new.sort_indices()
        new_terms = np.repeat(np.arange(new.shape[1], dtype=np.int64), np.diff(new.indptr))
        n_docs = n_kept + new.shape[0]
        dtype = _doc_dtype(n_docs)
        terms = np.concatenate([term[alive], new_terms])
        docs = np.concatenate(
            [renumber[self.docs[alive]], new.indices.astype(np.int64) + n_kept]
        ).astype(dtype)
        new_tf2 = np.minimum(np.rint(new.data * TF_SCALE), MAX_TF2).astype(np.uint8)
        tf2 = np.concatenate([self.tf2[alive], new_tf2])
        # Stable: kept topics stay ascending within a term and the added ones come after.
        order = np.argsort(terms, kind="stable")
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=n_terms), out=indptr[1:])
        added_lengths = np.asarray(new.sum(axis=1), dtype=np.float32).ravel()
        lengths = np.concatenate([self.lengths[keep], added_lengths])
        return Postings.assemble(indptr, docs[order], tf2[order], lengths)
