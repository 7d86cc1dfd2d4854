"""Compiled query kernels: BM25 over a query's postings, top-k, and query-term coverage.

A query touches thousands of postings; in numpy each step is a pass over all of them and
a call with fixed overhead, in Python a loop per posting. numba compiles these loops to
machine code (as bm25s does for its fast backend): one pass accumulates scores and
remembers the topics it touched, a small insertion buffer keeps the best k. Compiled
once per machine (`cache=True`) and run without the GIL, so searches in worker threads
run in parallel with the event loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
from numba import njit

from shared.kb.scoring import K1, TF_SCALE


def _compiled[F: Callable[..., Any]](fn: F) -> F:
    """`fn` compiled by numba, keeping its signature for the type checker."""
    return cast(F, njit(cache=True, nogil=True)(fn))


@_compiled
def score_top(
    indptr: np.ndarray,
    docs: np.ndarray,
    tf2: np.ndarray,
    idf: np.ndarray,
    norm: np.ndarray,
    cols: np.ndarray,
    weights: np.ndarray,
    rank: np.ndarray,
    named: np.ndarray,
    k: int,
    scores: np.ndarray,
    touched: np.ndarray,
    delta_indptr: np.ndarray,
    delta_docs: np.ndarray,
    delta_tf2: np.ndarray,
    alive: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(top-k topics, their scores, the scores of the `named` topics), ties broken by rank.

    Named topics (mentioned verbatim) are scored but kept out of the top k: they are
    listed first anyway. `scores` (float64) and `touched` (int64), one slot per topic,
    are scratch space the caller keeps: `scores` must be all zeros and is left so. Each
    term's base postings are added before its delta postings; dead topics never rank.
    """
    n_touched = 0
    for slot in range(cols.shape[0]):
        col = cols[slot]
        term_weight = weights[slot] * idf[col]
        for at in range(indptr[col], indptr[col + 1]):
            doc = docs[at]
            tf = tf2[at] / TF_SCALE
            if scores[doc] == 0.0:
                touched[n_touched] = doc
                n_touched += 1
            scores[doc] += term_weight * tf * (K1 + 1.0) / (tf + norm[doc])
        for at in range(delta_indptr[col], delta_indptr[col + 1]):
            doc = delta_docs[at]
            tf = delta_tf2[at] / TF_SCALE
            if scores[doc] == 0.0:
                touched[n_touched] = doc
                n_touched += 1
            scores[doc] += term_weight * tf * (K1 + 1.0) / (tf + norm[doc])
    named_scores = np.zeros(named.shape[0], dtype=np.float64)
    for i in range(named.shape[0]):
        named_scores[i] = scores[named[i]]
        scores[named[i]] = 0.0
    best = np.full(k, -1, dtype=np.int64)
    best_scores = np.zeros(k, dtype=np.float64)
    size = 0
    for i in range(n_touched):
        doc = touched[i]
        score = scores[doc]
        scores[doc] = 0.0
        if score <= 0.0 or not alive[doc]:
            continue
        if size == k:
            last = best[k - 1]
            if score < best_scores[k - 1] or (
                score == best_scores[k - 1] and rank[doc] > rank[last]
            ):
                continue
        at = size if size < k else k - 1
        while at > 0 and (
            best_scores[at - 1] < score
            or (best_scores[at - 1] == score and rank[best[at - 1]] > rank[doc])
        ):
            if at < k:
                best[at] = best[at - 1]
                best_scores[at] = best_scores[at - 1]
            at -= 1
        best[at] = doc
        best_scores[at] = score
        if size < k:
            size += 1
    return best[:size], best_scores[:size], named_scores


@_compiled
def _find(indptr: np.ndarray, docs: np.ndarray, tf2: np.ndarray, col: int, doc: int) -> int:
    """tf2 of a topic's posting for a term (topics ascend within a term), or -1 if none."""
    lo, hi = indptr[col], indptr[col + 1]
    high = hi
    while lo < hi:
        mid = (lo + hi) // 2
        if docs[mid] < doc:
            lo = mid + 1
        else:
            hi = mid
    if lo < high and docs[lo] == doc:
        return int(tf2[lo])
    return -1


@_compiled
def coverage(
    indptr: np.ndarray,
    docs: np.ndarray,
    tf2: np.ndarray,
    top: np.ndarray,
    link_concept: np.ndarray,
    link_col: np.ndarray,
    link_factor: np.ndarray,
    concept_weight: np.ndarray,
    delta_indptr: np.ndarray,
    delta_docs: np.ndarray,
    delta_tf2: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per top topic: the weighted share of query concepts it contains (best link each),
    how many concepts it contains, and the highest doubled term frequency among them."""
    n_concepts = concept_weight.shape[0]
    best = np.zeros((n_concepts, top.shape[0]), dtype=np.float64)
    most = np.zeros(top.shape[0], dtype=np.int64)
    for link in range(link_col.shape[0]):
        col = link_col[link]
        for j in range(top.shape[0]):
            tf = _find(indptr, docs, tf2, col, top[j])
            if tf < 0:
                tf = _find(delta_indptr, delta_docs, delta_tf2, col, top[j])
            if tf >= 0:
                concept = link_concept[link]
                if link_factor[link] > best[concept, j]:
                    best[concept, j] = link_factor[link]
                if tf > most[j]:
                    most[j] = tf
    total = 0.0
    for concept in range(n_concepts):
        total += concept_weight[concept]
    shares = np.zeros(top.shape[0], dtype=np.float64)
    matched = np.zeros(top.shape[0], dtype=np.int64)
    for j in range(top.shape[0]):
        for concept in range(n_concepts):
            if best[concept, j] > 0.0:
                matched[j] += 1
            shares[j] += concept_weight[concept] * best[concept, j]
        if total > 0.0:
            shares[j] /= total
        else:
            shares[j] = 0.0
    return shares, matched, most
