"""A turn's KB context: its topics' content read in one query vs one read per topic.

Run: python bench/bench_turn_content.py [--turns 500]
A 1,000-topic SQLite store (every topic has an article); each turn searches the snapshot
and reads the content of its (up to 10) hits, as services/r42/knowledge.turn_context does.
Baseline in the same run, interleaved turn by turn: the previous way, one
`content.get` per hit gathered at once (each a separate read on the store's thread).
Prints the median and p95 per turn of both and the ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from services.r42.knowledge import (  # noqa: E402
    CONTEXT_CONTENT_CHARS,
    CONTEXT_MAX_TOPICS,
    KbSnapshot,
    load_snapshot,
    turn_context,
)
from services.r42.lookup import content_text  # noqa: E402
from shared.kb import KbContext, build_kb_context  # noqa: E402
from shared.store import Content, Store, Topic, open_store  # noqa: E402

N_TOPICS = 1_000
WORDS = """verlof pensioen declaratie laptop sprint review backlog klant budget opleiding
reiskosten thuiswerken beveiliging incident rooster salaris contract project team kantoor
fiets lunch borrel verzekering partner bonus factuur overleg gesprek groei mentor buddy""".split()


async def one_read_per_topic(*, store: Store, snapshot: KbSnapshot, question: str) -> KbContext:
    """The baseline: turn_context as it read content before get_many."""
    hits = snapshot.index.search(question, k=CONTEXT_MAX_TOPICS)
    ids = [hit.topic_id for hit in hits]
    found = await asyncio.gather(*(store.content.get(topic_id) for topic_id in ids))
    contents = {}
    for topic_id, content in zip(ids, found, strict=True):
        text = content_text(content, limit=CONTEXT_CONTENT_CHARS)
        if text:
            contents[topic_id] = text
    return build_kb_context(question, index=snapshot.index, topics=snapshot.topics,
                            relations=snapshot.relations, contents=contents,
                            max_topics=CONTEXT_MAX_TOPICS, hits=hits)  # fmt: skip


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of values, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main(turns: int) -> int:
    """Seed, measure both ways interleaved, print; non-zero only when the two disagree."""
    rng = random.Random(42)
    with tempfile.TemporaryDirectory() as tmp:
        store = await open_store(f"sqlite:///{Path(tmp) / 'r42.db'}")
        try:
            topics = [Topic(id=f"onderwerp-{i}", type="concept",
                            label=" ".join(rng.sample(WORDS, 2)).capitalize() + f" {i}",
                            description=" ".join(rng.choices(WORDS, k=30)) + ".")
                      for i in range(N_TOPICS)]  # fmt: skip
            await store.topics.upsert_many(topics)
            for t in topics:
                body = " ".join(rng.choices(WORDS, k=120))
                await store.content.put(
                    Content(
                        topic_id=t.id,
                        article={"title": t.label, "sections": [{"heading": "Kort", "body": body}]},
                    )
                )
            snapshot = await load_snapshot(store)
            questions = [f"Hoe werkt {' '.join(rng.sample(WORDS, 3))}?" for _ in range(50)]
            new: list[float] = []
            old: list[float] = []
            for i in range(turns):
                q = questions[i % len(questions)]
                texts = {}
                # Alternating which goes first, so neither gains from the other's warm-up.
                ways = [("new", turn_context), ("old", one_read_per_topic)]
                for name, way in ways if i % 2 else reversed(ways):
                    started = time.perf_counter()
                    texts[name] = (await way(store=store, snapshot=snapshot, question=q)).text
                    (new if name == "new" else old).append((time.perf_counter() - started) * 1e3)
                if texts["new"] != texts["old"]:
                    print(f"BROKEN: the two ways disagree on {q!r}", file=sys.stderr)
                    return 1
        finally:
            await store.close()
    n50, o50 = statistics.median(new), statistics.median(old)
    print(f"turn KB context, {N_TOPICS} topics with content, {turns} turns, 10 hits each")
    print(f"  one query (get_many)   p50 {n50:7.3f} ms   p95 {pct(new, 0.95):7.3f} ms")
    print(f"  one read per topic     p50 {o50:7.3f} ms   p95 {pct(old, 0.95):7.3f} ms")
    ratio95 = pct(new, 0.95) / pct(old, 0.95)
    print(f"  one query / per topic  p50 {n50 / o50:7.2f}x   p95 {ratio95:7.2f}x")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=500)
    sys.exit(asyncio.run(main(parser.parse_args().turns)))
