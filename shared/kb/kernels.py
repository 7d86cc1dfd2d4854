"""Compiled query kernel: BM25 over a query's postings with exact pruning, top-k, coverage.

A query touches thousands of postings; in numpy each step is a pass over all of them and
a call with fixed overhead, in Python a loop per posting. numba compiles these loops to
machine code (as bm25s does for its fast backend), and one call does a whole search: a
numba call costs microseconds per array it returns, so results go into buffers the caller
keeps. Compiled once per machine (`cache=True`) and run without the GIL, so searches in
worker threads run in parallel with the event loop.

Pruning (term-at-a-time with a "continue" phase, after Moffat & Zobel): terms come
strongest first; once the best a topic could still gain from the remaining terms is below
the k-th best score so far, no untouched topic can reach the top k, and the remaining
terms are only looked up (binary search) for the few topics that still can. The k best
topics so far are kept up to date posting by posting, so that moment is known after every
term without a pass over the touched topics; the pass that lists those that can still climb
gives up as soon as they are too many to look up. Scores add up term by term in the given
order either way, so the result equals the full pass bit for bit.

Heavy queries change the bookkeeping, not the sums: once a query has touched an eighth of
the topics, it stops listing the ones it touches, and the passes that look for the able
topics or the top k go along all topics in order (vector instructions) instead.

The kernels share one module on purpose: numba's cache checks only the source file of the
function it loads, so a caller cached from one file would keep a stale copy of a callee
changed in another.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
from numba import njit

from shared.kb.scoring import K1, PROMINENT_TF, TF_SCALE

# A contribution is term_weight * (K1 + 1) * tf / (tf + norm) with norm > 0, so below
# term_weight * (K1 + 1); the margin keeps the bound safe from rounding.
_BOUND_MARGIN = 1.0 + 1e-6
_LOOKUP_COST = 24  # postings a full pass reads for the price of one lookup (measured)
_SCAN_SHARE = 8  # a pass along all topics costs what one over an eighth of them does (measured)
_COUNT_BLOCK = 2048  # topics a count goes along between checks of its limit


def _compiled[F: Callable[..., Any]](fn: F) -> F:
    """`fn` compiled by numba, keeping its signature for the type checker."""
    return cast(F, njit(cache=True, nogil=True, error_model="numpy")(fn))


@_compiled
def _strongest_first(cols: np.ndarray, weights: np.ndarray, idf: np.ndarray) -> np.ndarray:
    """Slots by weight × idf, highest first, ties in slot order (a stable argsort of the
    negated products, as the numpy path sorts them)."""
    n = cols.shape[0]
    key = np.empty(n, dtype=np.float64)
    for slot in range(n):
        key[slot] = weights[slot] * idf[cols[slot]]
    order = np.arange(n)
    for i in range(1, n):
        current = order[i]
        at = i
        while at > 0 and key[order[at - 1]] < key[current]:
            order[at] = order[at - 1]
            at -= 1
        order[at] = current
    return order


@_compiled
def _places(
    docs: np.ndarray, start: int, end: int, targets: np.ndarray, n: int, at: np.ndarray
) -> int:  # fmt: skip
    """at[i] = the first place in docs[start:end] (one term's ascending postings, start <
    end) holding targets[i] or a later topic, for i < n; returns the steps taken. All n
    binary searches step together, without branches: each step's reads are independent,
    so they overlap instead of waiting on one another."""
    size = end - start
    at[:n] = start
    steps = 1
    while size > 1:
        half = size >> 1
        for i in range(n):
            place = at[i]
            at[i] = place + half if docs[place + half] < targets[i] else place
        size -= half
        steps += 1
    for i in range(n):
        at[i] += docs[at[i]] < targets[i]
    return steps


@_compiled
def _walk(
    indptr: np.ndarray, docs: np.ndarray, tf2: np.ndarray, col: int, candidates: np.ndarray,
    n: int, scores: np.ndarray, norm: np.ndarray, term_weight: float, at: np.ndarray,
) -> int:  # fmt: skip
    """Adds a term's contribution to the candidates[:n] it holds; returns the postings
    probed (`at`: n scratch for _places)."""
    start, end = indptr[col], indptr[col + 1]
    if start == end:
        return 0
    steps = _places(docs, start, end, candidates, n, at)
    for i in range(n):
        place = at[i]
        doc = candidates[i]
        if place < end and docs[place] == doc:
            tf = tf2[place] / TF_SCALE
            scores[doc] += term_weight * tf * (K1 + 1.0) / (tf + norm[doc])
    return n * steps


@_compiled
def _kth_best(
    scores: np.ndarray, candidates: np.ndarray, n: int, alive: np.ndarray,
    named: np.ndarray, k: int, best: np.ndarray,
) -> float:  # fmt: skip
    """The k-th highest score among candidates[:n] that are live and not named (0 if fewer)."""
    size = 0
    for i in range(n):
        doc = candidates[i]
        score = scores[doc]
        if not alive[doc] or named[doc]:
            continue
        if size == k and score <= best[k - 1]:
            continue
        at = size if size < k else k - 1
        while at > 0 and best[at - 1] < score:
            best[at] = best[at - 1]
            at -= 1
        best[at] = score
        if size < k:
            size += 1
    return best[k - 1] if size == k else 0.0


@_compiled
def _add(
    indptr: np.ndarray, docs: np.ndarray, tf2: np.ndarray, col: int, norm: np.ndarray,
    term_weight: float, scores: np.ndarray, touched: np.ndarray, n_touched: int,
    alive: np.ndarray, named: np.ndarray, lead_docs: np.ndarray, lead_scores: np.ndarray,
    buf: np.ndarray, enough: int,
) -> int:  # fmt: skip
    """Adds a term's postings, listing the topics new to the query until `enough` are
    listed; returns how many are (`buf`: scratch for a chunk's contributions)."""
    # A chunk's contributions first, in a loop of their own: its divisions run in vector
    # registers (numba's "numpy" error model drops the zero check that would stop that),
    # which a loop that also scatters into the scores cannot do.
    k = lead_docs.shape[0]
    floor = lead_scores[k - 1]
    start, end = indptr[col], indptr[col + 1]
    while start < end:
        stop = min(start + buf.shape[0], end)
        dense = n_touched >= enough
        chunk = docs[start:stop]
        freqs = tf2[start:stop]
        m = stop - start
        for i in range(m):
            buf[i] = norm[chunk[i]]
        for i in range(m):
            tf = freqs[i] / TF_SCALE
            buf[i] = term_weight * tf * (K1 + 1.0) / (tf + buf[i])
        for i in range(m):
            doc = chunk[i]
            score = scores[doc]
            if not dense:
                touched[n_touched] = doc  # kept only if new: no branch to mispredict
                n_touched += score == 0.0
            score += buf[i]
            scores[doc] = score
            if score > floor and alive[doc] and not named[doc]:
                # The score rose above the k-th best: update the k best (distinct topics),
                # here and not in a function (a call per posting costs more than this).
                at = k - 1
                for j in range(k):
                    if lead_docs[j] == doc:
                        at = j
                        break
                while at > 0 and lead_scores[at - 1] < score:
                    lead_docs[at] = lead_docs[at - 1]
                    lead_scores[at] = lead_scores[at - 1]
                    at -= 1
                lead_docs[at] = doc
                lead_scores[at] = score
                floor = lead_scores[k - 1]
        start = stop
    return n_touched


@_compiled
def _reachable(
    listed: np.ndarray, n: int, scores: np.ndarray, named: np.ndarray, alive: np.ndarray,
    still: float, theta: float, into: np.ndarray, limit: int, dense: bool,
) -> int:  # fmt: skip
    """Copy (in order) the first n listed topics that are live, not named and can still
    reach theta into `into`; returns how many, or -1 as soon as there are over `limit`."""
    kept = 0
    for i in range(n):
        doc = i if dense else listed[i]
        if scores[doc] + still >= theta and alive[doc] and not named[doc]:
            if kept == limit:
                return -1
            into[kept] = doc
            kept += 1
    return kept


@_compiled
def _count_reachable(
    scores: np.ndarray, n_docs: int, named: np.ndarray, alive: np.ndarray, still: float,
    theta: float, limit: int,
) -> int:  # fmt: skip
    """How many topics below n_docs are live, not named and can still reach theta, or a
    number over `limit` as soon as there are more: a pass along the arrays in blocks, each
    in vector registers (a topic no term touched has score 0)."""
    count = 0
    for start in range(0, n_docs, _COUNT_BLOCK):
        stop = min(start + _COUNT_BLOCK, n_docs)
        # Over slices from 0, in a reduction of its own: a loop LLVM vectorises (one over
        # range(start, stop) it does not, and runs 9x slower).
        part, live, names = scores[start:stop], alive[start:stop], named[start:stop]
        block = 0
        for i in range(stop - start):
            block += (part[i] + still >= theta) & live[i] & (not names[i])
        count += block
        if count > limit:
            break
    return count


@_compiled
def _keep_reachable(
    touched: np.ndarray, n: int, scores: np.ndarray, named: np.ndarray, alive: np.ndarray,
    still: float, theta: float,
) -> int:  # fmt: skip
    """Keep (in place, in order) the first n touched topics that can still reach theta.

    A named topic always stays; a dropped one has its score cleared. Returns how many stayed.
    """
    kept = 0
    for i in range(n):
        doc = touched[i]
        if named[doc] or (alive[doc] and scores[doc] + still >= theta):
            touched[kept] = doc
            kept += 1
        else:
            scores[doc] = 0.0
    return kept


@_compiled
def _links(
    reach_indptr: np.ndarray, reach_cols: np.ndarray, reach_factors: np.ndarray,
    reach_weight: np.ndarray, words: np.ndarray, word_tf: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """A question's term links from its words' entries (shared.kb.reach.terms_of, compiled):
    cols, weights, word number, factors, and each word's weight."""
    n_words = words.shape[0]
    n_links = 0
    for i in range(n_words):
        n_links += reach_indptr[words[i] + 1] - reach_indptr[words[i]]
    cols = np.empty(n_links, dtype=np.int64)
    weights = np.empty(n_links, dtype=np.float64)
    concept = np.empty(n_links, dtype=np.int64)
    factors = np.empty(n_links, dtype=np.float64)
    concept_weight = np.empty(n_words, dtype=np.float64)
    cap = 0.0  # the highest weight of a word the KB uses
    unknown = False
    at = 0
    for i in range(n_words):
        entry = words[i]
        tf = word_tf[i] if word_tf.shape[0] else 1.0
        lo, hi = reach_indptr[entry], reach_indptr[entry + 1]
        for j in range(lo, hi):
            factor = reach_factors[j]
            cols[at] = reach_cols[j]
            factors[at] = factor
            weights[at] = factor * tf
            concept[at] = i
            at += 1
        weight = reach_weight[entry] * tf
        concept_weight[i] = weight
        if hi > lo:
            cap = max(cap, weight)
        else:
            unknown = True
    if unknown and n_links:
        for i in range(n_words):
            entry = words[i]
            if reach_indptr[entry + 1] == reach_indptr[entry]:
                concept_weight[i] = min(concept_weight[i], cap)
    return cols, weights, concept, factors, concept_weight


@_compiled
def search(
    indptr: np.ndarray, docs: np.ndarray, tf2: np.ndarray, idf: np.ndarray, norm: np.ndarray,
    delta_indptr: np.ndarray, delta_docs: np.ndarray, delta_tf2: np.ndarray,
    alive: np.ndarray, reach_indptr: np.ndarray, reach_cols: np.ndarray,
    reach_factors: np.ndarray, reach_weight: np.ndarray, words: np.ndarray,
    word_tf: np.ndarray, rank: np.ndarray, named_docs: np.ndarray, k: int,
    scores: np.ndarray, touched: np.ndarray, named: np.ndarray, out: np.ndarray,
    out_top: np.ndarray, out_supported: np.ndarray, out_named: np.ndarray,
) -> int:  # fmt: skip
    """search_links for a question given as its distinct words' entry numbers in a
    shared.kb.reach table and their repetition weights (or none: all 1): the links are
    expanded here, so a search builds no per-query arrays of terms in Python."""
    cols, weights, link_concept, link_factor, concept_weight = _links(
        reach_indptr, reach_cols, reach_factors, reach_weight, words, word_tf
    )
    return search_links(
        indptr, docs, tf2, idf, norm, delta_indptr, delta_docs, delta_tf2, alive, cols,
        weights, link_concept, link_factor, concept_weight, rank, named_docs, k, scores,
        touched, named, out, out_top, out_supported, out_named,
    )  # fmt: skip


@_compiled
def search_links(
    indptr: np.ndarray, docs: np.ndarray, tf2: np.ndarray, idf: np.ndarray, norm: np.ndarray,
    delta_indptr: np.ndarray, delta_docs: np.ndarray, delta_tf2: np.ndarray,
    alive: np.ndarray, cols: np.ndarray, weights: np.ndarray, link_concept: np.ndarray,
    link_factor: np.ndarray, concept_weight: np.ndarray, rank: np.ndarray,
    named_docs: np.ndarray, k: int, scores: np.ndarray, touched: np.ndarray,
    named: np.ndarray, out: np.ndarray, out_top: np.ndarray, out_supported: np.ndarray,
    out_named: np.ndarray,
) -> int:  # fmt: skip
    """One query: fills the outputs, returns how many top topics they hold.

    Slots (term links: col, weight, concept, factor) are scored strongest first.

    Per top topic, best first: its number into `out_top`, score and coverage share into
    `out` (float64, 3 rows of k or more), whether that is supported into `out_supported`
    (scoring.Ranked); the postings read into out[2, 0]. `named_docs` (mentioned verbatim:
    scored but kept out of the top k, they are listed first anyway) come back ordered by
    score, then rank, and their scores in `out_named`. Ties break by rank; dead topics
    never rank. Scratch space the caller keeps, one slot per topic: `scores` (all zeros,
    left so), `touched` (one slot more), `named` (all False, left so). Each term's base
    postings are added before its delta postings.
    """
    order = _strongest_first(cols, weights, idf)
    cols, weights = cols[order], weights[order]
    link_concept, link_factor = link_concept[order], link_factor[order]
    n_slots = cols.shape[0]
    # Without a delta segment its per-term offsets are never read: one cache miss less a term.
    has_delta = delta_docs.shape[0] > 0
    remaining = np.zeros(n_slots + 1, dtype=np.float64)  # bound of slots i..end
    lengths = np.zeros(n_slots + 1, dtype=np.int64)  # postings of slots i..end
    for slot in range(n_slots - 1, -1, -1):
        col = cols[slot]
        bound = weights[slot] * idf[col] * (K1 + 1.0) * _BOUND_MARGIN
        remaining[slot] = remaining[slot + 1] + bound
        lengths[slot] = lengths[slot + 1] + indptr[col + 1] - indptr[col]
        if has_delta:
            lengths[slot] += delta_indptr[col + 1] - delta_indptr[col]
    for i in range(named_docs.shape[0]):
        named[named_docs[i]] = True
    best = np.zeros(k, dtype=np.float64)
    # The k best live, unnamed topics so far (scores descending), kept up to date posting
    # by posting: the k-th best score is known after every term at no extra pass.
    lead_docs = np.full(k, -1, dtype=np.int64)
    lead_scores = np.zeros(k, dtype=np.float64)
    n_docs = alive.shape[0]
    # Topics touched from which a pass along all topics costs less than one through them:
    # the list stops growing there, and is no longer read.
    enough = (n_docs + _SCAN_SHARE - 1) // _SCAN_SHARE
    n_touched = 0
    read = 0
    buf = np.empty(64, dtype=np.float64)  # _add's scratch
    slot = 0
    theta = 0.0  # the k-th best score so far (0 while fewer than k topics scored)
    # Once the bound left is below theta, no untouched topic can reach the top k: `able`
    # lists the touched ones that still can, when they are few enough to look up.
    able = np.empty(0, dtype=np.int64)
    n_able = 0
    while slot < n_slots:
        col = cols[slot]
        term_weight = weights[slot] * idf[col]
        n_touched = _add(
            indptr, docs, tf2, col, norm, term_weight, scores, touched, n_touched, alive,
            named, lead_docs, lead_scores, buf, enough,
        )  # fmt: skip
        if has_delta and delta_indptr[col + 1] > delta_indptr[col]:  # a call costs, even empty
            n_touched = _add(
                delta_indptr, delta_docs, delta_tf2, col, norm, term_weight, scores, touched,
                n_touched, alive, named, lead_docs, lead_scores, buf, enough,
            )  # fmt: skip
        theta = lead_scores[k - 1]
        read += lengths[slot] - lengths[slot + 1]
        slot += 1
        if slot == n_slots or remaining[slot] >= theta:
            continue
        # A pass over the topics is worth it only while the postings left outweigh it: it
        # counts along all topics (a vector pass) once many are touched, and otherwise
        # goes through the touched ones and gives up once the able ones are too many to
        # look up for less than reading the rest in full (the touched ones' scores are
        # cleared before the lookups: a second pass through them).
        scan = n_touched >= enough
        if scan:
            if lengths[slot] * _SCAN_SHARE <= n_docs:
                continue
            limit = (lengths[slot] - 1) // ((n_slots - slot) * _LOOKUP_COST)
            able_count = _count_reachable(
                scores, n_docs, named, alive, remaining[slot], theta, limit
            )
            if able_count > limit:
                continue
        else:
            if lengths[slot] <= 2 * n_touched:
                continue
            limit = (lengths[slot] - 1 - n_touched) // ((n_slots - slot) * _LOOKUP_COST)
        if able.shape[0] <= limit:
            able = np.empty(limit + 1, dtype=np.int64)
        n_able = _reachable(
            touched, n_docs if scan else n_touched, scores, named, alive, remaining[slot], theta,
            able, limit, scan,
        )  # fmt: skip
        if n_able >= 0:
            break
    n_candidates = n_touched
    continued = slot < n_slots
    scan = n_touched >= enough  # passes go along all topics
    if continued:
        # Continue phase: walk each remaining term's postings along the able and named
        # topics, in topic order. The other scores are cleared first, or, when many were
        # touched, all at once at the end.
        if not scan:
            kept = scores[able[:n_able]]
            for i in range(n_touched):
                doc = touched[i]
                if not named[doc]:
                    scores[doc] = 0.0
            scores[able[:n_able]] = kept
        touched[:n_able] = able[:n_able]
        n_candidates = n_able
        for i in range(named_docs.shape[0]):
            touched[n_candidates] = named_docs[i]
            n_candidates += 1
        if not scan or named_docs.shape[0]:  # a scan lists the able topics in order
            touched[:n_candidates].sort()
        places = np.empty(n_candidates, dtype=np.int64)  # _walk's scratch
        while slot < n_slots:
            col = cols[slot]
            term_weight = weights[slot] * idf[col]
            read += _walk(
                indptr, docs, tf2, col, touched, n_candidates, scores, norm, term_weight, places
            )  # fmt: skip
            if has_delta and delta_indptr[col + 1] > delta_indptr[col]:
                read += _walk(
                    delta_indptr, delta_docs, delta_tf2, col, touched, n_candidates, scores,
                    norm, term_weight, places,
                )  # fmt: skip
            slot += 1
            if slot < n_slots and n_candidates > k:
                theta = _kth_best(scores, touched, n_candidates, alive, named, k, best)
                n_candidates = _keep_reachable(
                    touched, n_candidates, scores, named, alive, remaining[slot], theta
                )
    for i in range(named_docs.shape[0]):
        doc = named_docs[i]
        out_named[i] = scores[doc]
        scores[doc] = 0.0
        named[doc] = False
    _by_score(named_docs, out_named, rank)
    top = out_top[:k]
    top[:] = -1
    top_scores = out[0, :k]
    top_scores[:] = 0.0
    if continued:
        size = _top(scores, touched, n_candidates, False, alive, rank, top, top_scores)
        if scan:
            scores[:n_docs] = 0.0
    elif scan:
        size = _led(scores, n_docs, alive, rank, lead_docs, lead_scores, top, top_scores)
    else:
        size = _top(scores, touched, n_candidates, False, alive, rank, top, top_scores)
    _coverage(
        indptr, docs, tf2, delta_indptr, delta_docs, delta_tf2, top, size,
        link_concept, cols, link_factor, concept_weight, out[1], out_supported,
    )  # fmt: skip
    out[2, 0] = read
    return size


@_compiled
def _by_score(docs: np.ndarray, scores: np.ndarray, rank: np.ndarray) -> None:
    """Orders docs and their scores together (in place): score descending, then rank."""
    for i in range(1, docs.shape[0]):
        doc, score = docs[i], scores[i]
        at = i
        while at > 0 and (
            scores[at - 1] < score or (scores[at - 1] == score and rank[docs[at - 1]] > rank[doc])
        ):
            docs[at] = docs[at - 1]
            scores[at] = scores[at - 1]
            at -= 1
        docs[at] = doc
        scores[at] = score


@_compiled
def _top(
    scores: np.ndarray, listed: np.ndarray, n: int, dense: bool, alive: np.ndarray,
    rank: np.ndarray, top: np.ndarray, top_scores: np.ndarray,
) -> int:  # fmt: skip
    """The k best live listed topics (all n when dense) into top (score, then rank),
    clearing their scores; returns how many."""
    k = top.shape[0]
    size = 0
    for i in range(n):
        doc = i if dense else listed[i]
        score = scores[doc]
        scores[doc] = 0.0
        if score <= 0.0 or not alive[doc]:
            continue
        if size == k:
            last = top[k - 1]
            if score < top_scores[k - 1] or (score == top_scores[k - 1] and rank[doc] > rank[last]):
                continue
        at = size if size < k else k - 1
        while at > 0 and (
            top_scores[at - 1] < score
            or (top_scores[at - 1] == score and rank[top[at - 1]] > rank[doc])
        ):
            if at < k:
                top[at] = top[at - 1]
                top_scores[at] = top_scores[at - 1]
            at -= 1
        top[at] = doc
        top_scores[at] = score
        if size < k:
            size += 1
    return size


@_compiled
def _led(
    scores: np.ndarray, n_docs: int, alive: np.ndarray, rank: np.ndarray,
    lead_docs: np.ndarray, lead_scores: np.ndarray, top: np.ndarray, top_scores: np.ndarray,
) -> int:  # fmt: skip
    """`_top` over all n_docs topics, from the k best kept while adding: they are the top
    k unless another topic ties the k-th best score (then ranks decide, so all compete)."""
    k = top.shape[0]
    size = 0
    while size < k and lead_docs[size] >= 0:
        size += 1
    floor = lead_scores[k - 1] if size == k else 0.0
    level = 0
    for doc in range(n_docs):  # a vector pass
        score = scores[doc]
        level += (score > 0.0) & (score >= floor) & alive[doc]
    if level != size:
        return _top(scores, lead_docs, n_docs, True, alive, rank, top, top_scores)
    # The lead's scores are its topics' current ones: _top orders them (ties by rank).
    size = _top(scores, lead_docs, size, False, alive, rank, top, top_scores)
    scores[:n_docs] = 0.0
    return size


@_compiled
def _lookup(
    indptr: np.ndarray, docs: np.ndarray, tf2: np.ndarray, col: int, targets: np.ndarray,
    n: int, found: np.ndarray, at: np.ndarray,
) -> None:  # fmt: skip
    """found[i] = tf2 of targets[i] in a term's postings, where it has one (left as is
    elsewhere; `at`: n scratch for _places)."""
    start, end = indptr[col], indptr[col + 1]
    if start == end:
        return
    _places(docs, start, end, targets, n, at)
    for i in range(n):
        place = at[i]
        if place < end and docs[place] == targets[i]:
            found[i] = tf2[place]


@_compiled
def _coverage(
    indptr: np.ndarray, docs: np.ndarray, tf2: np.ndarray, delta_indptr: np.ndarray,
    delta_docs: np.ndarray, delta_tf2: np.ndarray, top: np.ndarray, size: int,
    link_concept: np.ndarray, link_col: np.ndarray, link_factor: np.ndarray,
    concept_weight: np.ndarray, shares: np.ndarray, supported: np.ndarray,
) -> None:  # fmt: skip
    """Per top topic: the weighted share of query concepts it contains (best link each),
    and whether two or more are among them, or one it is about (PROMINENT_TF), or the
    query has only one."""
    n_concepts = concept_weight.shape[0]
    best = np.zeros((n_concepts, size), dtype=np.float64)
    most = np.zeros(size, dtype=np.int64)
    found = np.empty(size, dtype=np.int64)
    at = np.empty(size, dtype=np.int64)
    for link in range(link_col.shape[0]):
        col = link_col[link]
        found[:] = -1
        _lookup(indptr, docs, tf2, col, top, size, found, at)
        if delta_docs.shape[0] and delta_indptr[col + 1] > delta_indptr[col]:
            _lookup(delta_indptr, delta_docs, delta_tf2, col, top, size, found, at)
        concept = link_concept[link]
        factor = link_factor[link]
        for j in range(size):
            tf = found[j]
            if tf >= 0:
                if factor > best[concept, j]:
                    best[concept, j] = factor
                if tf > most[j]:
                    most[j] = tf
    total = 0.0
    for concept in range(n_concepts):
        total += concept_weight[concept]
    for j in range(size):
        share = 0.0
        matched = 0
        for concept in range(n_concepts):
            if best[concept, j] > 0.0:
                matched += 1
            share += concept_weight[concept] * best[concept, j]
        shares[j] = share / total if total > 0.0 else 0.0
        supported[j] = n_concepts == 1 or matched >= 2 or most[j] >= PROMINENT_TF * TF_SCALE
