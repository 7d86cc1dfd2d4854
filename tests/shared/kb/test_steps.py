"""Step functions: run in order here, and containers emptied a chunk a slice."""

from __future__ import annotations

from shared.kb.steps import releasing, run_steps


def test_releasing_empties_a_container_a_chunk_a_slice() -> None:
    for items in ([*range(10)], {i: str(i) for i in range(10)}, set(range(10))):
        steps = releasing(items, chunk=4)
        slices = 0
        for step in steps:
            assert step is None  # Python slices only: nothing for a worker thread
            slices += 1
        assert len(items) == 0 and slices == 3
    assert run_steps(releasing([])) is None
