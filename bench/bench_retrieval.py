"""Retrieval speed and memory at 10,000 and 50,000 synthetic topics: R42 vs bm25s vs TF-IDF.

Run: python bench/bench_retrieval.py
Baselines in the same run, each used the fast way its docs describe: bm25s with its numba
backend and one reusable Tokenizer (query tokenisation timed, as R42's analysis is), and
scikit-learn's TfidfVectorizer as one sparse product `q @ X.T`. Latency p50/p95 are medians
over repeats; memory is what each engine keeps allocated (tracemalloc, numpy included) and
the resident-memory growth of a forked child that builds it. "cold" is one first pass over
the questions on a fresh index (R42 caches analysis per word, never per question). Goals:
latency ≤ 1.0x and memory ≤ 1.5x bm25s. Exits non-zero only when the run is broken, never
for a missed goal.
"""

from __future__ import annotations

import functools
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

import numpy as np

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
REPEATS = 5
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


def rss_delta_mb(build: Callable[[], object]) -> float:
    """Resident-memory growth of a forked child that builds an engine and keeps it."""
    import multiprocessing

    import psutil

    def child(out: multiprocessing.SimpleQueue) -> None:  # type: ignore[type-arg]
        gc.collect()
        before = psutil.Process().memory_info().rss
        kept = build()
        gc.collect()
        out.put((psutil.Process().memory_info().rss - before) / 2**20)
        del kept

    context = multiprocessing.get_context("fork")
    out = context.SimpleQueue()
    process = context.Process(target=child, args=(out,))
    process.start()
    process.join()
    return float(out.get()) if process.exitcode == 0 else float("nan")


def bm25s_engine(topics: list[KbTopic]) -> tuple[object, Callable[[str], list[str]]]:
    """bm25s as its docs say to use it fast: one Tokenizer (ids), numba backend, one thread.

    The query is tokenised (Dutch stopwords, Snowball stemmer) inside the timed call, as
    R42 analyses its query inside `search`.
    """
    import bm25s
    import Stemmer
    from bm25s.tokenization import Tokenizer

    tokenizer = Tokenizer(stemmer=Stemmer.Stemmer("dutch").stemWord, stopwords="nl")
    corpus = [f"{t.id}\n{t.label}\n{t.label}\n{t.description}" for t in topics]
    retriever = bm25s.BM25(backend="numba")
    retriever.index(tokenizer.tokenize(corpus, show_progress=False), show_progress=False)
    ids = [t.id for t in topics]

    def search(query: str) -> list[str]:
        tokens = tokenizer.tokenize([query], update_vocab=False, show_progress=False)
        if not tokens or not tokens[0]:
            return []
        docs, _ = retriever.retrieve(
            tokens, k=10, show_progress=False, n_threads=1, backend_selection="numba"
        )
        return [ids[int(d)] for d in docs[0]]

    return (retriever, tokenizer), search


def tfidf_engine(topics: list[KbTopic]) -> tuple[object, Callable[[str], list[str]]]:
    """scikit-learn TF-IDF the fast way: `q @ X.T` on CSR, top-10 by argpartition."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(sublinear_tf=True, strip_accents="unicode", dtype=np.float32)
    corpus = [f"{t.id}\n{t.label}\n{t.label}\n{t.description}" for t in topics]
    transposed = vectorizer.fit_transform(corpus).T.tocsr()
    ids = [t.id for t in topics]

    def search(query: str) -> list[str]:
        scores = (vectorizer.transform([query]) @ transposed).toarray().ravel()
        top = np.argpartition(-scores, 10)[:10]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [ids[int(i)] for i in top if scores[i] > 0]

    return (vectorizer, transposed), search


def _engine(
    builder: Callable[[list[KbTopic]], tuple[object, Callable[[str], object]]],
    topics: list[KbTopic],
) -> object:
    """What an engine keeps once built (its search function aside)."""
    return builder(topics)[0]


def timed(search: Callable[[str], object], queries: list[str]) -> list[float]:
    """Seconds per query, one pass."""
    samples = []
    for query in queries:
        started = time.perf_counter()
        search(query)
        samples.append(time.perf_counter() - started)
    return samples


def run(n_topics: int) -> bool:
    """Build the engines at one KB size and print the figures; False if the run is broken."""
    rng = random.Random(SEED)
    topics, relations, contents = make_kb(rng, n_topics)
    queries = make_queries(rng, topics)
    by_id = {t.id: t for t in topics}

    builders: dict[str, Callable[[list[KbTopic]], tuple[object, Callable[[str], object]]]] = {
        "R42": lambda ts: (index := RetrievalIndex.build(ts), lambda q: index.search(q, k=10)),
        "bm25s": bm25s_engine,
        "tf-idf": tfidf_engine,
    }
    built: dict[str, tuple[object, Callable[[str], object]]] = {}
    build_s: dict[str, float] = {}
    for name, builder in builders.items():
        started = time.perf_counter()
        built[name] = builder(topics)
        build_s[name] = time.perf_counter() - started
    # Cold: each engine's first pass over the questions, once its code is loaded (one
    # unrelated question compiles or loads the numba kernels), before R42's per-word
    # caches (analysis, reach, first words of labels) have seen any of their words.
    cold: dict[str, tuple[float, float]] = {}
    for name, (_, search) in built.items():
        search("welkom bij het bedrijf")
        cold[name] = percentiles(timed(search, queries))
    for _, search in built.values():  # warm-up: numba compiles, caches fill
        for query in queries[:50]:
            search(query)
    # Every repeat times each engine over the same questions, in a rotating order so no
    # engine always runs on a warmer CPU; figures are medians over the repeats.
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in built}
    names = list(built)
    for repeat in range(REPEATS):
        for name in names[repeat % len(names) :] + names[: repeat % len(names)]:
            runs[name].append(percentiles(timed(built[name][1], queries)))
    p50 = {name: statistics.median(r[0] for r in rows) for name, rows in runs.items()}
    p95 = {name: statistics.median(r[1] for r in rows) for name, rows in runs.items()}

    index = built["R42"][0]
    assert isinstance(index, RetrievalIndex)
    related = RelationIndex(relations)
    context_t, tokens = [], []
    for query in queries:
        hits = index.search(query, k=10)
        started = time.perf_counter()
        context = build_kb_context(
            query, index=index, topics=by_id, relations=related, contents=contents, hits=hits
        )
        context_t.append(time.perf_counter() - started)
        tokens.append(context.token_estimate)
    del built
    gc.collect()
    engines = {name: functools.partial(_engine, b, topics) for name, b in builders.items()}
    traced = {name: retained_mb(engine)[1] for name, engine in engines.items()}
    rss = {name: rss_delta_mb(engine) for name, engine in engines.items()}
    c50, c95 = percentiles(context_t)
    print(f"\n{n_topics:,} topics, {len(queries)} queries x {REPEATS} repeats (medians); "
          f"R42 vocabulary {index.vocabulary_size:,}")  # fmt: skip
    print(f"  {'':14}{'R42':>10}{'bm25s':>10}{'tf-idf':>10}   R42/bm25s  R42/tf-idf")
    rows = (
        ("build s", build_s, ".2f"),
        ("search p50 ms", p50, ".3f"),
        ("search p95 ms", p95, ".3f"),
        ("cold p50 ms", {name: c[0] for name, c in cold.items()}, ".3f"),
        ("cold p95 ms", {name: c[1] for name, c in cold.items()}, ".3f"),
        ("retained MB", traced, ".1f"),
        ("RSS delta MB", rss, ".1f"),
    )
    for label, values, fmt in rows:
        cells = "".join(f"{values[name]:>10{fmt}}" for name in names)
        ratios = (
            f"{values['R42'] / values['bm25s']:9.2f}x {values['R42'] / values['tf-idf']:10.2f}x"
        )
        print(f"  {label:14}{cells}   {ratios}")
    print(f"  context only  p50 {c50:6.3f} ms   p95 {c95:6.3f} ms (given the hits)")
    print("  goals: search p50 and p95 <= 1.0x bm25s; retained memory <= 1.5x bm25s")
    print(f"  load average at the end: {os.getloadavg()[0]:.2f}")
    return all(t > 0 for t in tokens) and len(index) == n_topics


def main() -> int:
    """Run the benchmark at every size and print the figures."""
    os.environ.setdefault("DISABLE_TQDM", "1")
    ok = all([run(n) for n in SIZES])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
