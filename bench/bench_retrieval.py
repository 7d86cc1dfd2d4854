"""Retrieval speed at 10,000 synthetic topics: build time, query + context latency, RSS.

Run: python bench/bench_retrieval.py
Baseline in the same run: a plain scikit-learn TfidfVectorizer top-10 query (no compound
fallback, no verbatim mentions, no context). Goals: build ≤ 2 s, p95 ≤ 5 ms per query
with context. Exits non-zero only when the run is broken, never because a goal is missed.
"""

from __future__ import annotations

import gc
import itertools
import os
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from shared.kb import (  # noqa: E402
    KbRelation,
    KbTopic,
    RelationIndex,
    RetrievalIndex,
    build_kb_context,
    to_kebab_id,
)

SIZES = (10_000, 50_000)
N_QUERIES = 600
SEED = 42
POOL_SIZE = 40_000

PARTS = """pensioen verlof vergoeding regeling beleid declaratie kosten reis thuiswerk ouderschaps
zwangerschaps opleidings budget salaris contract dienst team klant project beveiligings
toegangs incident melding aanvraag planning rooster kantoor fiets auto parkeer lunch borrel
verzekering uitkering partner nabestaanden wezen kilometer bonus premie inkoop factuur
levering overleg gesprek groei promotie mentor buddy werk tijd uren rapport review release
storing wachtwoord sleutel laptop data privacy audit risico kwaliteit klachten proces""".split()
SYLLABLES = "ver ont be ge la mo kers tal dijk stra wan pel rim dor sen hof mar lin bo taks".split()
FILLER = """de het een en van voor met op bij als je wij jouw team collega's altijd minimaal per
jaar maand week dagen euro procent aanvragen regelen bespreken goedkeuren melden via
portaal binnen na tijdens uiterlijk""".split()
TYPES = ("concept", "role", "process")


def _stem(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))


def _vocabulary(rng: random.Random) -> tuple[list[str], list[float]]:
    """A pool of compounds (part+part, part+stem, stem+part) with Zipf-like weights."""
    stems = sorted({_stem(rng) for _ in range(2500)})
    pool: set[str] = set()
    while len(pool) < POOL_SIZE:
        head, tail = rng.choice(PARTS + stems), rng.choice(PARTS + stems)
        pool.add(head + tail if rng.random() < 0.8 else head)
    words = sorted(pool)
    rng.shuffle(words)
    weights = list(itertools.accumulate(1.0 / (rank + 1) ** 1.05 for rank in range(len(words))))
    return words, weights


def make_kb(
    rng: random.Random, n_topics: int
) -> tuple[list[KbTopic], list[KbRelation], dict[str, str]]:
    """Synthetic topics with Dutch-like compounds, relations, and content for a fifth."""
    words, weights = _vocabulary(rng)
    topics: list[KbTopic] = []
    seen: set[str] = set()
    while len(topics) < n_topics:
        label = " ".join(rng.choices(words, cum_weights=weights, k=rng.randint(1, 2)))
        topic_id = to_kebab_id(label)
        if topic_id in seen:
            continue
        seen.add(topic_id)
        size = rng.randint(25, 70)
        text = rng.choices(words, cum_weights=weights, k=size)
        text = [w if rng.random() < 0.55 else rng.choice(FILLER) for w in text]
        topics.append(
            KbTopic(topic_id, label.capitalize(), rng.choice(TYPES), " ".join(text) + ".")
        )
    ids = [t.id for t in topics]
    relations = [
        KbRelation(rng.choice(ids), rng.choice(ids), rng.choice(("related_to", "part_of")))
        for _ in range(n_topics * 2)
    ]
    contents = {t.id: f"{t.label}\n\n{t.description * 3}" for t in topics[::5]}
    return topics, relations, contents


def make_queries(rng: random.Random, topics: list[KbTopic]) -> list[str]:
    """Questions with bare compound parts, truncated stems, verbatim labels and noise."""
    queries = []
    for i in range(N_QUERIES):
        topic = rng.choice(topics)
        words = topic.description.split()
        kind = i % 4
        if kind == 0:  # a compound part alone, as people ask: "hoe zit het met pensioen"
            queries.append(f"hoe zit het met {rng.choice(PARTS)} en {rng.choice(PARTS)}?")
        elif kind == 1:  # an out-of-vocabulary form: the fallback must do the work
            word = max(words, key=len)
            queries.append(f"wat is {word[:-2]}en {rng.choice(FILLER)} {rng.choice(words)}")
        elif kind == 2:  # a label named verbatim
            queries.append(f"Kun je iets vertellen over {topic.label.lower()}?")
        else:
            queries.append(" ".join(rng.sample(words, min(6, len(words)))) + "?")
    return queries


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return cuts[49] * 1000, cuts[94] * 1000


def retained_mb(build: Callable[[], object]) -> tuple[object, float]:
    """What `build` returns and the memory it keeps allocated (tracemalloc, numpy included)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    built = build()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return built, (after - before) / 2**20


def bm25s_engine(topics: list[KbTopic]) -> tuple[object, Callable[[str], list[str]]]:
    """bm25s over the same text, Dutch stopwords and Snowball stemmer, top-10 per query."""
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("dutch")
    corpus = [f"{t.id}\n{t.label}\n{t.label}\n{t.description}" for t in topics]
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(corpus, stopwords="nl", stemmer=stemmer, show_progress=False),
        show_progress=False,
    )
    ids = [t.id for t in topics]

    def search(query: str) -> list[str]:
        tokens = bm25s.tokenize([query], stopwords="nl", stemmer=stemmer, show_progress=False)
        if not any(tokens.ids):
            return []
        docs, _ = retriever.retrieve(tokens, k=10, show_progress=False, n_threads=1)
        return [ids[int(d)] for d in docs[0]]

    return retriever, search


def timed(search: Callable[[str], object], queries: list[str]) -> list[float]:
    """Seconds per query, one pass."""
    samples = []
    for query in queries:
        started = time.perf_counter()
        search(query)
        samples.append(time.perf_counter() - started)
    return samples


def run(n_topics: int) -> bool:
    """Build both engines at one KB size and print the figures; False if the run is broken."""
    rng = random.Random(SEED)
    topics, relations, contents = make_kb(rng, n_topics)
    queries = make_queries(rng, topics)
    by_id = {t.id: t for t in topics}

    started = time.perf_counter()
    index = RetrievalIndex.build(topics)
    build_s = time.perf_counter() - started
    started = time.perf_counter()
    _, bm25_search = bm25s_engine(topics)
    base_build_s = time.perf_counter() - started
    related = RelationIndex(relations)

    # Both engines see the same questions in the same order; bm25s first, so ours has no
    # head start from a warm CPU cache. The first pass is cold for our expansion cache.
    base_t = timed(bm25_search, queries)
    ours_t = timed(lambda q: index.search(q, k=10), queries)
    context_t, tokens = [], []
    for query in queries:
        hits = index.search(query, k=10)
        started = time.perf_counter()
        context = build_kb_context(
            query, index=index, topics=by_id, relations=related, contents=contents, hits=hits
        )
        context_t.append(time.perf_counter() - started)
        tokens.append(context.token_estimate)

    _, ours_mb = retained_mb(lambda: RetrievalIndex.build(topics))
    _, base_mb = retained_mb(lambda: bm25s_engine(topics)[0])
    o50, o95 = percentiles(ours_t)
    b50, b95 = percentiles(base_t)
    c50, c95 = percentiles(context_t)
    print(f"\n{n_topics:,} topics, {len(queries)} queries; vocabulary {index.vocabulary_size:,}")
    print(f"  build         R42 {build_s:6.2f} s    bm25s {base_build_s:6.2f} s")
    print(f"  search p50    R42 {o50:6.3f} ms   bm25s {b50:6.3f} ms   ratio {o50 / b50:4.2f}x")
    print(f"  search p95    R42 {o95:6.3f} ms   bm25s {b95:6.3f} ms   ratio {o95 / b95:4.2f}x")
    print(f"  context only  p50 {c50:6.3f} ms   p95 {c95:6.3f} ms (given the hits)")
    print(
        f"  memory        R42 {ours_mb:6.1f} MB   bm25s {base_mb:6.1f} MB   ratio "
        f"{ours_mb / base_mb:4.2f}x"
    )
    print("  goals: latency ≤ 1.0x bm25s, memory ≤ 1.5x bm25s")
    return all(t > 0 for t in tokens) and len(index) == n_topics


def main() -> int:
    """Run the benchmark at every size and print the figures."""
    os.environ.setdefault("DISABLE_TQDM", "1")
    ok = all([run(n) for n in SIZES])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
