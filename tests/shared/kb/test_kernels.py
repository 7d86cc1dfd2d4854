"""The compiled kernels' helpers, against plain Python."""

from __future__ import annotations

import numpy as np


def test_lookup_finds_each_target_in_a_terms_postings() -> None:
    from shared.kb import kernels

    rng = np.random.default_rng(4)
    for _ in range(500):
        lists = [np.unique(rng.integers(0, 400, rng.integers(0, 200))) for _ in range(3)]
        indptr = np.zeros(4, dtype=np.int64)
        np.cumsum([len(docs) for docs in lists], out=indptr[1:])
        docs = np.concatenate(lists).astype(np.int32)
        tf2 = rng.integers(1, 256, len(docs)).astype(np.uint8)
        col = int(rng.integers(0, 3))
        held = dict(
            zip(lists[col].tolist(), tf2[indptr[col] : indptr[col + 1]].tolist(), strict=True)
        )
        # Any order, repeats, and topics before, between and past the term's postings.
        targets = rng.integers(-1, 420, rng.integers(1, 12)).astype(np.int64)
        found = np.full(len(targets) + 1, -7, dtype=np.int64)
        at = np.empty(len(targets), dtype=np.int64)
        kernels._lookup(indptr, docs, tf2, col, targets, len(targets), found, at)
        assert found[:-1].tolist() == [held.get(t, -7) for t in targets.tolist()]
        assert found[-1] == -7  # only the first n are written


def test_walk_adds_a_terms_contribution_to_the_candidates_it_holds() -> None:
    from shared.kb import kernels
    from shared.kb.scoring import K1, TF_SCALE

    rng = np.random.default_rng(5)
    norm = rng.uniform(0.3, 2.0, 500)
    for _ in range(300):
        lists = [np.unique(rng.integers(0, 500, rng.integers(0, 300))) for _ in range(2)]
        indptr = np.array([0, len(lists[0]), len(lists[0]) + len(lists[1])], dtype=np.int64)
        docs = np.concatenate(lists).astype(np.int32)
        tf2 = rng.integers(1, 256, len(docs)).astype(np.uint8)
        held = dict(zip(lists[1].tolist(), tf2[indptr[1] :].tolist(), strict=True))
        candidates = rng.permutation(np.unique(rng.integers(0, 520, rng.integers(1, 40))))
        n = len(candidates) - 1  # the last candidate is left out
        scores = np.zeros(520)
        at = np.empty(n, dtype=np.int64)
        probed = kernels._walk(indptr, docs, tf2, 1, candidates, n, scores, norm, 0.7, at)
        expected = np.zeros(520)
        for doc in candidates[:n].tolist():
            if doc in held:
                tf = held[doc] / TF_SCALE
                expected[doc] += 0.7 * tf * (K1 + 1.0) / (tf + norm[doc])
        assert scores.tolist() == expected.tolist()
        assert probed >= n if len(lists[1]) else probed == 0


def _postings(
    rng: np.random.Generator, n_terms: int, n_docs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lists = [np.unique(rng.integers(0, n_docs, rng.integers(0, n_docs))) for _ in range(n_terms)]
    indptr = np.zeros(n_terms + 1, dtype=np.int64)
    np.cumsum([len(docs) for docs in lists], out=indptr[1:])
    docs = np.concatenate(lists).astype(np.uint16)
    return indptr, docs, rng.integers(1, 12, len(docs)).astype(np.uint8)


def test_add_sums_each_posting_lists_new_topics_and_keeps_the_k_best() -> None:
    from shared.kb import kernels
    from shared.kb.scoring import K1, TF_SCALE

    rng = np.random.default_rng(6)
    n_docs, k = 700, 10
    norm = rng.uniform(0.3, 2.0, n_docs).astype(np.float32)
    for _ in range(60):
        indptr, docs, tf2 = _postings(rng, 4, n_docs)
        alive = rng.random(n_docs) > 0.1
        named = rng.random(n_docs) > 0.97
        weights = rng.uniform(0.1, 3.0, 4)
        expected = np.zeros(n_docs)
        for col, weight in enumerate(weights.tolist()):
            for at in range(indptr[col], indptr[col + 1]):
                tf = tf2[at] / TF_SCALE
                expected[docs[at]] += weight * tf * (K1 + 1.0) / (tf + norm[docs[at]])
        touched_all = np.flatnonzero(expected).tolist()
        for enough in (n_docs + 1, 0, len(touched_all) // 3):
            scores = np.zeros(n_docs)
            touched = np.empty(n_docs + 1, dtype=np.int64)
            lead_docs, lead_scores = np.full(k, -1, dtype=np.int64), np.zeros(k)
            n = 0
            for col, weight in enumerate(weights.tolist()):
                n = kernels._add(
                    indptr, docs, tf2, col, norm, weight, scores, touched, n, alive, named,
                    lead_docs, lead_scores, np.empty(64), enough,
                )  # fmt: skip
            assert scores.tolist() == expected.tolist()  # the same sums, bit for bit
            listed = touched[:n].tolist()
            if enough > len(touched_all):
                assert sorted(listed) == touched_all
            else:  # the listing stops once enough are listed (within a chunk of postings)
                assert len(set(listed)) == n and set(listed) <= set(touched_all)
                assert enough <= n <= enough + 64
            ranked = sorted(expected[alive & ~named].tolist(), reverse=True)[:k]
            held = [s for s in lead_scores.tolist() if s > 0]
            assert held == [s for s in ranked if s > 0]
            assert all(alive[d] and not named[d] for d in lead_docs.tolist() if d >= 0)
            assert np.allclose(expected[lead_docs[: len(held)]], held)


def test_led_is_the_top_k_and_lets_ties_with_the_kth_compete_by_rank() -> None:
    from shared.kb import kernels

    rng = np.random.default_rng(8)
    n_docs, k = 300, 10
    for case in range(400):
        # Few distinct scores: the k-th best is often shared with topics outside the k.
        scores = rng.choice([0.0, 0.5, 1.0, 1.5, 2.0, 2.5], n_docs, p=[0.5] + [0.1] * 5)
        alive = rng.random(n_docs) > 0.1
        rank = rng.permutation(n_docs).astype(np.int64)
        live = [d for d in range(n_docs) if alive[d] and scores[d] > 0]
        # The k best kept while adding: highest scores, any topics among the tied k-th.
        kept = sorted(live, key=lambda d: (-scores[d], rng.random()))[:k]
        lead_docs = np.full(k, -1, dtype=np.int64)
        lead_scores = np.zeros(k)
        lead_docs[: len(kept)], lead_scores[: len(kept)] = kept, scores[kept]
        expected = sorted(live, key=lambda d: (-scores[d], rank[d]))[:k]
        copy = scores.copy()
        top, top_scores = np.full(k, -1, dtype=np.int64), np.zeros(k)
        size = kernels._led(copy, n_docs, alive, rank, lead_docs, lead_scores, top, top_scores)
        assert top[:size].tolist() == expected, case
        assert top_scores[:size].tolist() == scores[expected].tolist()
        assert not copy.any()  # left zeroed for the next query


def test_count_reachable_counts_live_unnamed_topics_that_can_still_reach_theta() -> None:
    from shared.kb import kernels

    rng = np.random.default_rng(9)
    stopped = 0
    for _ in range(200):
        n = int(rng.integers(1, 3 * kernels._COUNT_BLOCK))
        scores = np.where(rng.random(n) > 0.4, rng.uniform(0, 3, n), 0.0)
        alive, named = rng.random(n) > 0.2, rng.random(n) > 0.9
        still, theta = float(rng.uniform(0, 1)), float(rng.uniform(0.5, 3))
        expected = sum(
            bool(alive[d] and not named[d] and scores[d] + still >= theta) for d in range(n)
        )
        assert kernels._count_reachable(scores, n, named, alive, still, theta, n) == expected
        # Over a limit it may stop early, but never below the limit.
        limit = int(rng.integers(0, expected + 2))
        counted = kernels._count_reachable(scores, n, named, alive, still, theta, limit)
        assert counted == expected if expected <= limit else limit < counted <= expected
        stopped += counted < expected
        into = np.empty(expected + 1, dtype=np.int64)
        listed = kernels._reachable(into, n, scores, named, alive, still, theta, into, n, True)
        assert listed == expected
        if expected:  # one too few allowed: the listing gives up
            short = expected - 1
            gave_up = kernels._reachable(
                into, n, scores, named, alive, still, theta, into, short, True
            )
            assert gave_up == -1
    assert stopped > 20  # counts that stopped at a block past their limit
