"""The numpy scoring path (small KBs) returns exactly what the compiled kernels return."""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from shared.kb import KbTopic, RetrievalIndex, scoring, topics_from_markdown

ROOT = Path(__file__).resolve().parents[3]
HANDBOOK = ROOT / "services" / "extractor" / "sample_handbook"
GOLDEN = ROOT / "evals" / "retrieval"


def _handbook() -> list[KbTopic]:
    topics: list[KbTopic] = []
    for path in sorted(HANDBOOK.glob("*.md")):
        topics.extend(topics_from_markdown(path.read_text(encoding="utf-8"), source=path.name))
    return topics


def _questions() -> list[str]:
    rows: list[str] = []
    for name in ("golden.jsonl", "offtopic.jsonl"):
        lines = (GOLDEN / name).read_text(encoding="utf-8").splitlines()
        rows.extend(json.loads(line)["question"] for line in lines if line.strip())
    return rows


def _random_kb(rng: random.Random, n: int) -> list[KbTopic]:
    words = ["pensioen", "verlof", "regeling", "fiets", "lease", "kosten", "declaratie",
             "thuiswerk", "vergoeding", "partner", "reis", "budget", "team", "laptop"]  # fmt: skip
    return [
        KbTopic(
            f"t-{i}",
            " ".join(rng.sample(words, 2)).capitalize(),
            "concept",
            " ".join(rng.choices(words, k=rng.randint(3, 30))),
        )
        for i in range(n)
    ]


def _zipf_kb(
    rng: random.Random, syllables: str, parts: int, power: float, n: int, length: tuple[int, int]
) -> tuple[list[str], list[KbTopic]]:
    """Words of 2..`parts` syllables with Zipf-like frequencies (rank ** -power), and n
    topics labelled with one or two of them and described with `length` of them."""
    pieces = syllables.split()
    words = sorted({"".join(rng.choices(pieces, k=rng.randint(2, parts))) for _ in range(n + 500)})
    rng.shuffle(words)
    cumulative = list(itertools.accumulate(1.0 / (r + 1) ** power for r in range(len(words))))
    topics = []
    for i in range(n):
        label = " ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(1, 2)))
        text = " ".join(rng.choices(words, cum_weights=cumulative, k=rng.randint(*length)))
        topics.append(KbTopic(f"t-{i}", label, "concept", text))
    return words, topics


def _both(
    index: RetrievalIndex, questions: list[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[list[list[tuple[object, ...]]], list[list[tuple[object, ...]]]]:
    with monkeypatch.context() as patch:
        patch.setattr(scoring, "NUMBA_MIN_TOPICS", 10**9)
        plain = [[tuple(hit) for hit in index.search(q)] for q in questions]
    with monkeypatch.context() as patch:
        patch.setattr(scoring, "NUMBA_MIN_TOPICS", 0)
        fast = [[tuple(hit) for hit in index.search(q)] for q in questions]
    return plain, fast


def test_identical_hits_on_the_golden_set(monkeypatch: pytest.MonkeyPatch) -> None:
    index = RetrievalIndex.build(_handbook())
    plain, fast = _both(index, _questions(), monkeypatch)
    assert plain == fast  # ids, scores, coverage and support, bit for bit
    assert sum(map(len, plain)) > 1000


def test_identical_hits_on_a_random_kb_with_ties(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    index = RetrievalIndex.build(_random_kb(rng, 600))
    questions = ["pensioen", "fiets lease kosten", "t-17", "Lease fiets", "onbekend woord"]
    questions += [" ".join(rng.sample(["verlof", "partner", "reis", "budget", "team"], 3))
                  for _ in range(40)]  # fmt: skip
    plain, fast = _both(index, questions, monkeypatch)
    assert plain == fast
    # Many equal scores: ties come out in id order on both paths.
    scores = [hit[1] for hits in plain for hit in hits]
    assert len(scores) > len(set(scores))


def test_the_score_buffer_is_left_zeroed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scoring, "NUMBA_MIN_TOPICS", 0)
    index = RetrievalIndex.build(_random_kb(random.Random(5), 300))
    for query in ("pensioen verlof", "fiets", "Lease fiets", "t-3 fiets lease kosten t-9"):
        index.search(query)
    scratch = scoring._buffers(300, 10)
    assert not np.any(scratch.scores) and not np.any(scratch.named)


def test_a_small_kb_never_imports_numba() -> None:
    code = (
        "import sys\n"
        "from shared.kb import KbTopic, RetrievalIndex\n"
        "index = RetrievalIndex.build([KbTopic('fiets', 'Fietsregeling', 'concept', 'lease')])\n"
        "assert index.search('fiets')\n"
        "print('numba' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert result.stdout.strip() == "False"


def test_an_update_in_the_delta_answers_exactly_as_compacted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from shared.kb import retrieval

    rng = random.Random(11)
    base = RetrievalIndex.build(_random_kb(rng, 600))
    changed = _random_kb(random.Random(12), 8)[2:]  # t-2 … t-7 change
    changed += [KbTopic("nieuw-1", "Fiets lease", "concept", "fiets lease budget thuiswerk")]
    delta = base.updated(changed=changed, removed=["t-40", "t-41"])
    assert delta._postings.n_base == 600 and len(delta._postings.delta[1])  # not compacted
    with monkeypatch.context() as patch:
        patch.setattr(retrieval, "COMPACT_SHARE", -1.0)
        compact = base.updated(changed=changed, removed=["t-40", "t-41"])
    assert compact._postings.n_base == len(compact) == len(delta) == 600 - 2 + 1
    questions = ["pensioen", "fiets lease kosten", "t-3", "Fiets lease", "t-40", "budget team"]
    for question in questions:
        assert [tuple(h) for h in delta.search(question)] == [
            tuple(h) for h in compact.search(question)
        ], question
    plain, fast = _both(delta, questions, monkeypatch)
    assert plain == fast
    assert "t-40" not in {h.topic_id for q in questions for h in delta.search(q)}
    assert sorted(delta.topic_ids) == sorted(compact.topic_ids) == list(delta.sorted_ids)


def test_pruning_reads_less_and_ranks_exactly_as_the_full_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from shared.kb.tokens import content_words, tokenize

    rng = random.Random(21)
    topics = _random_kb(rng, 1500)
    for i, topic in enumerate(topics):  # a word every topic uses, and one that 30 use
        rare = " kwartaalrapport" * (1 + i % 3) if i % 50 == 0 else ""
        topics[i] = KbTopic(topic.id, topic.label, topic.type, f"{topic.description} team{rare}")
    index = RetrievalIndex.build(topics)
    questions = [
        "kwartaalrapport team",
        "kwartaalrapport van het team fiets",
        "team kwartaalrapport",
    ]
    plain, fast = _both(index, questions, monkeypatch)
    assert plain == fast  # ids, scores, coverage and support, bit for bit
    assert all(len(hits) >= 10 for hits in fast)
    monkeypatch.setattr(scoring, "NUMBA_MIN_TOPICS", 0)
    p = index._postings
    for question in questions:
        terms = index._query(content_words(tokenize(question)))
        links = (terms.cols, terms.weights, terms.concept, terms.factors)
        ranked = p.search(links, terms.concept_weight, index._rank, np.zeros(0, np.int64), 10)
        full = int((p.indptr[terms.cols + 1] - p.indptr[terms.cols]).sum())
        assert ranked.read < full / 4, (question, ranked.read, full)


def test_pruned_queries_naming_topics_rank_exactly_as_the_full_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Zipf-like words, labels named verbatim inside longer questions: the kernel prunes
    # mid-query while named topics are still being scored by the weaker terms.
    rng = random.Random(7)
    syllables = "ver ont be ge la mo kers tal dijk stra wan pel rim dor sen hof"
    _, topics = _zipf_kb(rng, syllables, 4, 1.0, 2500, (20, 60))
    index = RetrievalIndex.build(topics)
    questions = []
    for _ in range(150):
        topic = rng.choice(topics)
        extra = rng.sample(topic.description.split(), 4)
        questions.append(f"{' '.join(extra[:2])} {topic.label} {' '.join(extra[2:])}")
    plain, fast = _both(index, questions, monkeypatch)
    assert plain == fast
    assert sum(hit[2] is True for hits in fast for hit in hits) >= 100  # verbatim hits were there


def test_heavy_queries_rank_exactly_as_the_full_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    # Questions from a handful of postings to several per topic: the kernel stops listing
    # the topics it touches past an eighth of them, and then passes along all topics.
    from shared.kb.tokens import content_words, tokenize

    rng = random.Random(13)
    words, topics = _zipf_kb(
        rng, "ver ont be ge la mo kers tal dijk stra wan pel", 3, 1.3, 2400, (5, 80)
    )
    index = RetrievalIndex.build(topics)
    questions = [" ".join(rng.sample(words[: 8 * (1 + q % 40)], 1 + q % 6)) for q in range(240)]
    questions += [f"{rng.choice(words)} {rng.choice(topics).label}" for _ in range(60)]
    changed = [KbTopic(t.id, t.label, t.type, f"{t.description} {words[0]}") for t in topics[:90]]
    updated = index.updated(changed=changed, removed=["t-100", "t-101"])
    assert len(updated._postings.delta[1])  # scored from both segments
    for kb in (index, updated):
        plain, fast = _both(kb, questions, monkeypatch)
        assert plain == fast  # ids, scores, coverage and support, bit for bit
    p = index._postings
    per_topic = []
    for question in questions:
        cols = index._query(content_words(tokenize(question))).cols
        per_topic.append(int((p.indptr[cols + 1] - p.indptr[cols]).sum()) / p.n_docs)
    assert min(per_topic) < 1 / 8 and max(per_topic) > 2  # both ends of the kernel's range
    assert sum(1 / 8 < share < 2 for share in per_topic) > 30
