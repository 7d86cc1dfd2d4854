"""The query side of compound matching: gram codes and vocabulary look-ups in bulk."""

from __future__ import annotations

import numpy as np

from shared.kb.compound import STEM_CHARS, _gram_code, _gram_codes
from shared.kb.vocab import Vocabulary


def test_rolling_gram_codes_equal_each_window_coded_alone() -> None:
    for token in ("pensioenregeling", "fietsen", "ouderschaps-verlof2026", "abcdef"):
        windows = [token[at : at + STEM_CHARS] for at in range(len(token) - STEM_CHARS + 1)]
        assert _gram_codes(token) == [_gram_code(window) for window in windows]


def test_found_skips_terms_the_view_does_not_show() -> None:
    lineage = Vocabulary()
    for term in ("pensioen", "regeling", "verlof"):
        lineage.add(term)
    view = lineage.view()
    lineage.add("later")  # added after the view: invisible to it
    assert view.found(["regeling", "later", "onbekend", "pensioen"]) == [1, 0]
    held = view.held(np.array([True, False, True]))  # "regeling" no longer held by a topic
    assert held.found(["regeling", "pensioen", "verlof"]) == [0, 2]
