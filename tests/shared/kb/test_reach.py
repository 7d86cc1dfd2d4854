"""The per-index table of what query words reach: growth, threads, a full table, repeats."""

from __future__ import annotations

import math
import random
import threading

import pytest

from shared.kb import KbTopic, RetrievalIndex, retrieval, scoring
from shared.kb.reach import Reach, terms_of, word_counts


def _entry(word: str) -> tuple[list[int], list[float], float]:
    """A made-up reach: a word's terms depend only on the word (some reach nothing)."""
    rng = random.Random(word)
    n = rng.randint(0, 40)
    return [rng.randint(0, 10**6) for _ in range(n)], [rng.random() for _ in range(n)], rng.random()


def _check(reach: Reach, words: list[str]) -> None:
    arrays = reach.arrays
    for word in words:
        number = reach.numbers[word]
        cols, factors, weight = _entry(word)
        lo, hi = arrays.indptr[number], arrays.indptr[number + 1]
        assert arrays.cols[lo:hi].tolist() == cols
        assert arrays.factors[lo:hi].tolist() == factors
        assert arrays.weight[number] == weight


def test_entries_survive_the_arrays_growing() -> None:
    reach = Reach()
    words = [f"woord{i}" for i in range(1500)]  # many times the first arrays' room
    before = reach.arrays
    assert reach.resolve(words[:10], _entry) == list(range(10))
    assert reach.resolve(words, _entry) == list(range(1500))
    assert reach.arrays is not before and len(reach) == 1500
    _check(reach, words)
    # A reader that captured the old arrays still reads its (complete) entries there.
    assert before.indptr[10] == reach.arrays.indptr[10]
    assert (
        before.cols[: before.indptr[10]].tolist() == reach.arrays.cols[: before.indptr[10]].tolist()
    )


def test_threads_adding_the_same_and_new_words_get_one_entry_each() -> None:
    reach = Reach()
    words = [f"w{i}" for i in range(600)]
    start = threading.Barrier(4)
    seen: list[list[int]] = []

    def work(seed: int) -> None:
        rng = random.Random(seed)
        mine = rng.sample(words, len(words))
        start.wait()
        seen.append([reach.numbers[w] for w in mine if reach.resolve([w], _entry)])

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 4 and sorted(reach.numbers.values()) == list(range(600))
    _check(reach, words)


def test_repeated_words_weigh_one_plus_log_and_order_is_first_seen() -> None:
    assert word_counts(["fiets", "lease"]) == (["fiets", "lease"], word_counts([])[1])
    distinct, tf = word_counts(["lease", "fiets", "lease", "lease"])
    assert distinct == ["lease", "fiets"]
    assert tf.tolist() == [1.0 + math.log(3), 1.0]


def test_a_word_that_reaches_nothing_weighs_at_most_the_strongest_known_word() -> None:
    reach = Reach()
    numbers = [reach.add("bekend", [3, 7], [1.0, 0.5], 2.0), reach.add("onbekend", [], [], 9.0)]
    terms = terms_of(reach.arrays, numbers, word_counts([])[1])
    assert terms.cols.tolist() == [3, 7] and terms.concept.tolist() == [0, 0]
    assert terms.concept_weight.tolist() == [2.0, 2.0]


def _kb(n: int) -> list[KbTopic]:
    rng = random.Random(4)
    words = ["pensioen", "verlof", "regeling", "fiets", "lease", "kosten", "declaratie",
             "thuiswerk", "vergoeding", "partner", "reis", "budget", "team", "laptop"]  # fmt: skip
    return [
        KbTopic(f"t-{i}", " ".join(rng.sample(words, 2)).capitalize(), "concept",
                " ".join(rng.choices(words, k=rng.randint(3, 30))))
        for i in range(n)
    ]  # fmt: skip


@pytest.mark.parametrize("min_topics", [0, 10**9], ids=["compiled", "numpy"])
def test_a_full_table_starts_afresh_and_answers_the_same(
    monkeypatch: pytest.MonkeyPatch, min_topics: int
) -> None:
    monkeypatch.setattr(scoring, "NUMBA_MIN_TOPICS", min_topics)
    index = RetrievalIndex.build(_kb(300))
    questions = ["pensioen verlof", "fietsleaseregeling", "lease lease fiets", "onbekendwoord",
                 "t-3 budget", "thuiswerkvergoeding en reiskosten"]  # fmt: skip
    first = [[tuple(h) for h in index.search(q)] for q in questions]
    monkeypatch.setattr(retrieval, "EXPANSION_CACHE", 2)
    again = [[tuple(h) for h in index.search(q)] for q in questions]
    assert again == first and any(first)
    assert len(index._reach_cache) <= 2 + max(len(q.split()) for q in questions)
