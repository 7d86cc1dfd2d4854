"""Retrieval speed at 10,000 synthetic topics: build time, query + context latency, RSS.

Run: python bench/bench_retrieval.py
Baseline in the same run: a plain scikit-learn TfidfVectorizer top-10 query (no compound
fallback, no verbatim mentions, no context). Goals: build ≤ 2 s, p95 ≤ 5 ms per query
with context. Exits non-zero only when the run is broken, never because a goal is missed.
"""

from __future__ import annotations

import gc
import itertools
import random
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from shared.kb import (  # noqa: E402
    KbRelation,
    KbTopic,
    RelationIndex,
    RetrievalIndex,
    build_kb_context,
    to_kebab_id,
    tokenize,
)

N_TOPICS = 10_000
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


def make_kb(rng: random.Random) -> tuple[list[KbTopic], list[KbRelation], dict[str, str]]:
    """Synthetic topics with Dutch-like compounds, relations, and content for a fifth."""
    words, weights = _vocabulary(rng)
    topics: list[KbTopic] = []
    seen: set[str] = set()
    while len(topics) < N_TOPICS:
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
        for _ in range(N_TOPICS * 2)
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


def rss_mb() -> tuple[float, float]:
    """Current and peak resident set size of this process, in MB."""
    status = Path("/proc/self/status")
    if status.exists():
        fields = dict(line.split(":", 1) for line in status.read_text().splitlines())
        return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return peak, peak


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds."""
    cuts = statistics.quantiles(samples, n=100, method="inclusive")
    return cuts[49] * 1000, cuts[94] * 1000


def main() -> int:
    """Run the benchmark and print the figures."""
    rng = random.Random(SEED)
    topics, relations, contents = make_kb(rng)
    queries = make_queries(rng, topics)
    by_id = {t.id: t for t in topics}
    import sklearn.feature_extraction.text  # noqa: F401  (loaded before the RSS baseline)

    gc.collect()
    rss_before, _ = rss_mb()

    started = time.perf_counter()
    index = RetrievalIndex.build(topics)
    build_s = time.perf_counter() - started
    started = time.perf_counter()
    related = RelationIndex(relations)
    relations_s = time.perf_counter() - started
    gc.collect()
    rss_after, rss_peak = rss_mb()

    # Pass 1, cold: every question is new to the index's expansion cache.
    context_t, tokens, expanded, empty = [], [], 0, 0
    for query in queries:
        started = time.perf_counter()  # build_kb_context runs the search itself
        context = build_kb_context(
            query, index=index, topics=by_id, relations=related, contents=contents
        )
        context_t.append(time.perf_counter() - started)
        tokens.append(context.token_estimate)
        empty += not context.topic_ids
    # Pass 2, warm: the same questions again, search only.
    search_t = []
    for query in queries:
        started = time.perf_counter()
        index.search(query, k=10)
        search_t.append(time.perf_counter() - started)
        words = set(tokenize(query))
        expanded += any(term not in words for term in index.query_weights(query))

    from sklearn.feature_extraction.text import TfidfVectorizer

    docs = [f"{t.id}\n{t.label}\n{t.description}" for t in topics]
    started = time.perf_counter()
    vectorizer = TfidfVectorizer()
    matrix = vectorizer.fit_transform(docs)
    base_build_s = time.perf_counter() - started
    base_t = []
    for query in queries:
        started = time.perf_counter()
        scores = (matrix @ vectorizer.transform([query]).T).toarray().ravel()
        top = np.argpartition(-scores, 10)[:10]
        sorted(top.tolist(), key=lambda d: -scores[d])
        base_t.append(time.perf_counter() - started)

    s50, s95 = percentiles(search_t)
    c50, c95 = percentiles(context_t)
    b50, b95 = percentiles(base_t)
    print(f"topics {len(topics):,}  relations {len(relations):,}  queries {len(queries)}")
    print(
        f"vocabulary {index.vocabulary_size:,} terms; queries with compound expansions: "
        f"{expanded}/{len(queries)}; queries without topics: {empty}"
    )
    print(
        f"index build            {build_s:7.3f} s   (goal ≤ 2 s; plain TfidfVectorizer "
        f"{base_build_s:.3f} s)   relation index {relations_s:.3f} s"
    )
    print(f"search + context, cold p50 {c50:6.2f} ms   p95 {c95:6.2f} ms   (goal p95 ≤ 5 ms)")
    print(f"search only, warm      p50 {s50:6.2f} ms   p95 {s95:6.2f} ms   (repeated questions)")
    print(f"baseline tf-idf top-10 p50 {b50:6.2f} ms   p95 {b95:6.2f} ms")
    print(f"ratio ours(search+context)/baseline   p50 {c50 / b50:5.2f}x   p95 {c95 / b95:5.2f}x")
    print(f"context tokens         max {max(tokens)}  median {statistics.median(tokens):.0f}")
    print(
        f"RSS before index {rss_before:7.1f} MB   after {rss_after:7.1f} MB   "
        f"(index ≈ {rss_after - rss_before:.1f} MB)   peak {rss_peak:.1f} MB"
    )
    broken = not all(t > 0 for t in tokens) or len(index) != N_TOPICS
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
