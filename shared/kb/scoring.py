"""BM25 top-k and query coverage: numpy for small KBs, compiled kernels for large ones.

Both paths compute the same floating-point operations in the same order (scores add up
term by term, posting by posting; ties break by rank), so they return identical results;
tests/shared/kb/test_scoring_parity.py holds them to it. numba costs ~100 MB of memory and
a second or more of import, which a KB the size of a handbook never pays back: it is
imported only once an index reaches NUMBA_MIN_TOPICS topics.
"""

from __future__ import annotations

import sys
import threading
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from shared.kb.postings import Postings
    from shared.kb.reach import Packed

K1, B = 1.2, 0.75
TF_SCALE = 2.0
NUMBA_MIN_TOPICS = 2000
# One question word found in a topic is evidence only when the topic is about that word:
# it occurs there at least twice (a label is indexed twice), not once in passing.
PROMINENT_TF = 2.0

_scratch = threading.local()
_NO_SCORES = np.zeros(0, dtype=np.float64)
_NO_FLAGS = np.zeros(0, dtype=bool)


class Ranked(NamedTuple):
    """One query's outcome: the top topics, their scores and coverage; the named ones'."""

    docs: list[int]  # topic numbers, best first
    scores: list[float]
    coverage: list[float]  # share of the query's concept weight each top topic holds
    # Per top topic, whether its coverage rests on two or more of the query's words, on
    # one it is about (PROMINENT_TF), or on the query's only word.
    supported: list[bool]
    named: list[int]  # the named topics, by score (then rank)
    named_scores: list[float]
    read: int  # postings read (plus lookups of the compiled path's continue phase)


def compiled() -> ModuleType:
    """The numba kernels (imported, and compiled or loaded from cache, on first use)."""
    loaded = sys.modules.get("shared.kb.kernels")  # an import statement costs microseconds
    if loaded is not None:
        return loaded
    from shared.kb import kernels

    return kernels


class _Scratch(NamedTuple):
    """One thread's buffers for the kernels: scratch, outputs, and views of the outputs."""

    scores: np.ndarray  # one per topic, all zeros between searches
    touched: np.ndarray  # one per topic and one more (the kernel writes one slot ahead)
    named: np.ndarray  # one flag per topic, all False between searches
    out: np.ndarray  # float64 (3, width): top scores, coverage shares; postings read at [2, 0]
    top: np.ndarray  # int64 (width): top topic numbers
    supported: np.ndarray  # bool (width)
    # The outputs' rows as memoryviews: a slice of one and .tolist() cost a fraction of
    # numpy's, and give Python ints and bools directly.
    rows: tuple[memoryview, memoryview, memoryview, memoryview, memoryview]


def _buffers(n_docs: int, k: int) -> _Scratch:
    """This thread's scratch, grown to n_docs topics and k results if needed."""
    kept: _Scratch | None = getattr(_scratch, "buffers", None)
    if kept is None or len(kept.scores) < n_docs or len(kept.top) < k:
        size = max(n_docs, 1024, 0 if kept is None else len(kept.scores))
        width = max(k, 16)
        out = np.zeros((3, width), dtype=np.float64)
        top = np.zeros(width, dtype=np.int64)
        supported = np.zeros(width, dtype=bool)
        kept = _Scratch(
            np.zeros(size, dtype=np.float64), np.empty(size + 1, dtype=np.int64),
            np.zeros(size, dtype=bool), out, top, supported,
            (memoryview(top), memoryview(out[0]), memoryview(out[1]), memoryview(supported),
             memoryview(out[2])),
        )  # fmt: skip
        _scratch.buffers = kept
    return kept


def search(
    p: Postings, links: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    concept_weight: np.ndarray, rank: np.ndarray, named: np.ndarray, k: int,
) -> Ranked:  # fmt: skip
    """BM25 top-k of live topics for weighted term links (col, weight, concept, factor),
    and how much of the query each covers; `named` topics are scored but not ranked (the
    compiled path orders the array in place; Ranked.named has the order on both paths).

    Links are scored strongest first (weight × idf), on both paths: the compiled one
    prunes in that order, and the numpy one adds in the same order to give the same sums.
    """
    cols, weights, concept, factors = links
    if p.n_docs >= NUMBA_MIN_TOPICS:
        b = _buffers(p.n_docs, k)
        named_out = np.empty(len(named), dtype=np.float64) if len(named) else _NO_SCORES
        d_indptr, d_docs, d_tf2 = p.delta
        size = compiled().search_links(
            p.indptr, p.docs, p.tf2, p.idf, p.norm, d_indptr, d_docs, d_tf2, p.alive,
            cols, weights, concept, factors, concept_weight, rank, named, k,
            b.scores, b.touched, b.named, b.out, b.top, b.supported, named_out,
        )  # fmt: skip
        return _unpacked(b.rows, size, named, named_out)
    if len(cols) > 1:
        order = np.argsort(-(weights * p.idf[cols]), kind="stable")
        cols, weights = cols[order], weights[order]
        concept, factors = concept[order], factors[order]
    top, top_scores, named_scores = score_top_numpy(p, cols, weights, rank, named, k)
    if len(named) > 1:
        order = np.lexsort((rank[named], -named_scores))
        named, named_scores = named[order], named_scores[order]
    if len(top):
        segments = ((p.indptr, p.docs, p.tf2), p.delta)
        share, supported = coverage_numpy(segments, top, concept, cols, factors, concept_weight)
    else:
        share, supported = _NO_SCORES, _NO_FLAGS
    d_indptr = p.delta[0]
    read = int((p.indptr[cols + 1] - p.indptr[cols] + d_indptr[cols + 1] - d_indptr[cols]).sum())
    return Ranked(
        top.tolist(), top_scores.tolist(), share.tolist(), supported.tolist(), named.tolist(),
        named_scores.tolist(), read,
    )  # fmt: skip


def search_words(
    p: Postings, reach: Packed, words: np.ndarray, word_tf: np.ndarray, rank: np.ndarray,
    named: np.ndarray, k: int,
) -> Ranked:  # fmt: skip
    """`search` for a question given as its distinct words' entries in a reach table
    (shared.kb.reach), on the compiled path: the kernel expands the words' term links."""
    b = _buffers(p.n_docs, k)
    named_out = np.empty(len(named), dtype=np.float64) if len(named) else _NO_SCORES
    d_indptr, d_docs, d_tf2 = p.delta
    size = compiled().search(
        p.indptr, p.docs, p.tf2, p.idf, p.norm, d_indptr, d_docs, d_tf2, p.alive,
        reach.indptr, reach.cols, reach.factors, reach.weight, words, word_tf, rank, named, k,
        b.scores, b.touched, b.named, b.out, b.top, b.supported, named_out,
    )  # fmt: skip
    return _unpacked(b.rows, size, named, named_out)


def _unpacked(
    rows: tuple[memoryview, ...], size: int, named: np.ndarray, named_out: np.ndarray
) -> Ranked:
    top, top_scores, share, supported, read = rows
    return tuple.__new__(Ranked, (
        top[:size].tolist(), top_scores[:size].tolist(), share[:size].tolist(),
        supported[:size].tolist(), named.tolist(), named_out.tolist(), int(read[0]),
    ))  # fmt: skip


def _gathered(
    cols: np.ndarray, segments: tuple[tuple[np.ndarray, ...], ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(posting positions, segment number, slot) of every posting of `cols`: per column,
    the first segment's postings, then the second's (the kernels' order)."""
    spans = [(seg[0][cols], seg[0][cols + 1]) for seg in segments]
    lengths = np.stack([end - start for start, end in spans])  # (segments, slots)
    per_slot = lengths.sum(axis=0)
    slot_first = np.zeros(len(cols), dtype=np.int64)
    np.cumsum(per_slot[:-1], out=slot_first[1:])
    total = int(per_slot.sum())
    where = np.empty(total, dtype=np.int64)
    segment = np.empty(total, dtype=np.int8)
    slot = np.empty(total, dtype=np.int64)
    offset = slot_first.copy()
    slots = np.arange(len(cols), dtype=np.int64)
    for number, (start, _) in enumerate(spans):
        count = lengths[number]
        n = int(count.sum())
        first = np.zeros(len(cols), dtype=np.int64)
        np.cumsum(count[:-1], out=first[1:])
        inner = np.arange(n, dtype=np.int64) - np.repeat(first, count)
        out = np.repeat(offset, count) + inner
        where[out] = np.repeat(start, count) + inner
        segment[out] = number
        slot[out] = np.repeat(slots, count)
        offset = offset + count
    return where, segment, slot


def score_top_numpy(
    p: Postings, cols: np.ndarray, weights: np.ndarray, rank: np.ndarray, named: np.ndarray,
    k: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """score_top in numpy: the same sums in the same order (bincount adds sequentially)."""
    d_indptr, d_docs, d_tf2 = p.delta
    where, segment, slot = _gathered(cols, ((p.indptr,), (d_indptr,)))
    in_base = segment == 0
    doc = np.empty(len(where), dtype=np.intp)
    doc[in_base] = p.docs[where[in_base]]
    doc[~in_base] = d_docs[where[~in_base]]
    tf2 = np.empty(len(where), dtype=np.uint8)
    tf2[in_base] = p.tf2[where[in_base]]
    tf2[~in_base] = d_tf2[where[~in_base]]
    tf = tf2 / TF_SCALE
    term_weight = (weights * p.idf[cols])[slot]
    contribution = term_weight * tf * (K1 + 1.0) / (tf + p.norm[doc])
    scores = np.bincount(doc, weights=contribution, minlength=p.n_docs)
    named_scores = scores[named].astype(np.float64)
    scores[named] = 0.0
    candidates = np.flatnonzero((scores > 0.0) & p.alive)
    order = np.lexsort((rank[candidates], -scores[candidates]))[:k]
    best = candidates[order].astype(np.int64)
    return best, scores[best], named_scores


def _found(
    segment: tuple[np.ndarray, np.ndarray, np.ndarray], col: int, top: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per top topic: whether a segment holds it for the term, and its tf2 there."""
    indptr, docs, tf2 = segment
    low, high = int(indptr[col]), int(indptr[col + 1])
    span = docs[low:high]
    at = np.searchsorted(span, top)
    inside = at < len(span)
    found = np.zeros(len(top), dtype=bool)
    found[inside] = span[at[inside]] == top[inside]
    tf = np.zeros(len(top), dtype=np.int64)
    tf[found] = tf2[low + at[found]]
    return found, tf


def coverage_numpy(
    segments: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...],
    top: np.ndarray,
    link_concept: np.ndarray,
    link_col: np.ndarray,
    link_factor: np.ndarray,
    concept_weight: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """coverage in numpy: per link, a binary search of the top topics in its postings."""
    n_concepts = len(concept_weight)
    best = np.zeros((n_concepts, len(top)), dtype=np.float64)
    most = np.zeros(len(top), dtype=np.int64)
    for concept, col, factor in zip(
        link_concept.tolist(), link_col.tolist(), link_factor.tolist(), strict=True
    ):
        found, tf = _found(segments[0], col, top)
        in_delta, delta_tf = _found(segments[1], col, top)
        tf = np.where(found, tf, delta_tf)
        found |= in_delta
        best[concept] = np.where(found & (factor > best[concept]), factor, best[concept])
        np.maximum(most, np.where(found, tf, 0), out=most)
    total = 0.0
    for weight in concept_weight.tolist():
        total += weight
    shares = np.zeros(len(top), dtype=np.float64)
    for concept in range(n_concepts):
        shares = shares + concept_weight[concept] * best[concept]
    matched = (best > 0.0).sum(axis=0)
    supported = (n_concepts == 1) | (matched >= 2) | (most >= PROMINENT_TF * TF_SCALE)
    if total > 0.0:
        shares = shares / total
    else:
        shares = np.zeros(len(top), dtype=np.float64)
    return shares, supported
