"""The per-turn cost of picking an answer's sources: cached label patterns vs the seed's way.

Run: python bench/bench_answer_sources.py [--turns 2000]
Each turn checks 10 context topics (plus 3 search_kb topics) of a 1,000-topic KB against a
~600-character Dutch answer, as services/r42/sources.answer_sources does. Baseline in the same
run: the seed's version, which folds each label and builds its regex (through `re`'s own
small cache) on every turn. Prints the median and p95 per turn of both and the ratio.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from services.r42.sources import answer_sources  # noqa: E402
from shared.bus import SourceRef  # noqa: E402
from shared.kb import fold_text  # noqa: E402
from shared.store import Topic  # noqa: E402

N_TOPICS = 1_000
WORDS = """verlof pensioen declaratie laptop sprint review backlog klant budget opleiding
reiskosten thuiswerken beveiliging incident rooster salaris contract project team kantoor
fiets lunch borrel verzekering partner bonus factuur overleg gesprek groei mentor buddy""".split()


def seed_sources(
    answer: str, *, context_ids: Iterable[str], topics: Mapping[str, Topic]
) -> list[SourceRef]:
    """The seed's answer_sources (no lookups here): fold and build each pattern per call."""

    def mentions(folded_answer: str, phrase: str) -> bool:
        folded = fold_text(phrase).strip()
        if len(folded) < 3:
            return False
        return re.search(rf"(?<!\w){re.escape(folded)}(?!\w)", folded_answer) is not None

    chosen: dict[str, str] = {}
    folded = fold_text(answer)
    for topic_id in context_ids:
        topic = topics.get(topic_id)
        if topic is None or topic_id in chosen:
            continue
        if mentions(folded, topic.label) or mentions(folded, topic.id):
            chosen[topic_id] = topic.label
    return [SourceRef(id=i, label=label) for i, label in list(chosen.items())[:5]]


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of values, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    """Measure both ways on the same turns and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    args = parser.parse_args()
    rng = random.Random(42)
    topics = {}
    for i in range(N_TOPICS):
        label = " ".join(rng.sample(WORDS, 2)).capitalize() + f" {i}"
        topics[f"onderwerp-{i}"] = Topic(id=f"onderwerp-{i}", label=label, type="concept")
    ids = list(topics)
    # Questions repeat topics as real traffic does: 200 distinct questions.
    turns = []
    for _ in range(200):
        context = rng.sample(ids, 13)
        named = [topics[i].label for i in context[:2]]
        answer = f"Volgens {named[0]} en {named[1]}: " + " ".join(rng.choices(WORDS, k=80))
        turns.append((answer, context))
    ours: list[float] = []
    seeds: list[float] = []
    for n in range(args.turns):
        answer, context = turns[n % len(turns)]
        t0 = time.perf_counter()
        got = answer_sources(answer, lookups=(), context_ids=context, topics=topics)
        t1 = time.perf_counter()
        expected = seed_sources(answer, context_ids=context, topics=topics)
        t2 = time.perf_counter()
        if got != expected:
            print("BROKEN: the two ways pick different sources", file=sys.stderr)
            return 1
        ours.append((t1 - t0) * 1000)
        seeds.append((t2 - t1) * 1000)
    o50, s50 = statistics.median(ours), statistics.median(seeds)
    print(f"answer_sources, {N_TOPICS} topics, 13 candidates per turn, {args.turns} turns")
    print(f"  cached patterns p50 {o50:7.3f} ms   p95 {pct(ours, 0.95):7.3f} ms")
    print(f"  seed (baseline) p50 {s50:7.3f} ms   p95 {pct(seeds, 0.95):7.3f} ms")
    print(f"  cached / seed   p50 {o50 / s50:7.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
