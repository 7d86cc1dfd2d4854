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
