"""The GIL-friendly forms of np.repeat and cumsum that an update's passes over the postings use."""

from __future__ import annotations

import numpy as np
import pytest

from shared.kb import postings
from shared.kb.postings import _repeat, _running_total


@pytest.mark.parametrize("seed", range(6))
def test_repeat_matches_numpy_across_chunk_edges(
    monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Chunks cut inside a long run, runs of zero and a run longer than a chunk all match."""
    monkeypatch.setattr(postings, "REPEAT_CHUNK", 7)
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 5, size=40)
    counts[rng.integers(0, 40)] = 23  # one run spans several chunks
    counts[:3] = 0  # leading empty terms
    values = rng.integers(-1000, 1000, size=40)
    assert np.array_equal(_repeat(values, counts), np.repeat(values, counts))


def test_repeat_of_nothing_and_of_one_chunk() -> None:
    """No postings and fewer than a chunk go straight to numpy."""
    empty = np.zeros(0, dtype=np.int64)
    assert _repeat(empty, empty).shape == (0,)
    values = np.arange(3, dtype=np.int64)
    assert _repeat(values, np.array([2, 0, 1])).tolist() == [0, 0, 2]


def test_running_total_matches_cumsum() -> None:
    """The count of set flags up to and including each place."""
    flags = np.random.default_rng(1).random(1000) > 0.3
    out = np.zeros(1001, dtype=np.int64)
    _running_total(flags, out[1:])
    assert np.array_equal(out[1:], np.cumsum(flags))
    assert out[0] == 0
