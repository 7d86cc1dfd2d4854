"""Compound lookups extended update by update answer as lookups built over the whole vocabulary."""

from __future__ import annotations

import random

import pytest

from shared.kb import compound
from shared.kb.compound import CompoundIndex
from shared.kb.vocab import Vocabulary

STEMS = "pensioen regeling partner verlof ouder fiets lease kosten reis thuis werk budget".split()


def _term(rng: random.Random) -> str:
    return "".join(rng.sample(STEMS, rng.randint(1, 3))) + rng.choice(["", "en", "s", "ing"])


def test_extended_lookups_match_a_build_over_the_grown_vocabulary(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(compound, "MERGE_MIN_TERMS", 16)  # fold into the base now and then
    rng = random.Random(5)
    vocabulary = Vocabulary()
    for _ in range(60):
        vocabulary.add(_term(rng))
    index = CompoundIndex(vocabulary.view())
    segments = set()
    for _ in range(20):
        for _ in range(rng.randint(0, 8)):
            vocabulary.add(_term(rng))
        view = vocabulary.view()
        index = index.extended(view)
        segments.add(len(index._segments))
        fresh = CompoundIndex(view)
        for token in {*STEMS, *(_term(rng) for _ in range(20)), *list(view)[-5:]}:
            assert index.expand(token) == fresh.expand(token), token
            assert index.expand(token, 4) == fresh.expand(token, 4), token
    assert segments == {1, 2}
