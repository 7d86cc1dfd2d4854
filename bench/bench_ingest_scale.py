"""Ingest cost against graph size: 16 handbook-size files into a 100- and a 50,000-topic graph.

The files go through the real pipeline (`ingest_locally`: chunking, the offline provider
behind `call_llm`, merge with provenance, completion, kb.updated) on a SQLite store that
was seeded with 100 or 50,000 topics (and a relation per topic). Each size is measured
`--runs` times with fresh file contents, alternating; medians are printed and their ratio.

    python bench/bench_ingest_scale.py [--big 50000] [--runs 3]

Goal: the 50k run takes ≤ 1.5× the 100-topic run. Exits non-zero when it does not.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from services.extractor.config import ExtractOptions  # noqa: E402
from services.extractor.local import ingest_locally  # noqa: E402
from services.extractor.offline import offline_plans  # noqa: E402
from services.extractor.uploads import register_upload  # noqa: E402
from shared.config import build_settings  # noqa: E402
from shared.llm import MemorySink, OfflineProvider, configure_llm  # noqa: E402
from shared.store import Relation, Store, Topic, open_store  # noqa: E402

GOAL = 1.5
FILES = 16


def handbook_file(run: int, n: int) -> str:
    """A handbook page: a title and six sections of a few sentences (about 2.5 KB)."""
    body = ("Dit onderdeel beschrijft hoe het werkt bij Respellion, wie wat doet en waarom. "
            "Vragen stel je aan je teamlead of in het kanaal van het team. ") * 2  # fmt: skip
    sections = "".join(f"## Regel {run} {n} {s}\n{body}\n\n" for s in range(6))
    return f"# Pagina {run} {n}\n\n{sections}"


async def seed(store: Store, size: int) -> None:
    batch = 5000
    for start in range(0, size, batch):
        topics = [Topic(id=f"bestaand-{i}", label=f"Bestaand {i}", type="concept",
                        description="Een bestaand onderwerp in de grote graaf.")
                  for i in range(start, min(start + batch, size))]  # fmt: skip
        await store.topics.upsert_many(topics)
    relations = [Relation(source=f"bestaand-{i}", target=f"bestaand-{i + 1}", type="related_to")
                 for i in range(0, size - 1, 2)]  # fmt: skip
    await store.relations.upsert_many(relations)


async def one_run(store: Store, run: int) -> float:
    ids = []
    for n in range(FILES):
        reg = await register_upload(store, name=f"handboek/{run}/pagina-{n}.md",
                                    text=handbook_file(run, n), uploaded_by="bench",
                                    actor="bench")  # fmt: skip
        assert reg.source is not None
        ids.append(reg.source.id)
    started = time.perf_counter()
    options = ExtractOptions(max_chunk_chars=6000, overlap_chars=0)
    results = await ingest_locally(store=store, source_ids=ids, limiter=None, options=options)
    elapsed = time.perf_counter() - started
    failed = [s for s, r in results.items() if r.status != "completed"]
    if failed:
        raise SystemExit(f"error: {len(failed)} source(s) did not complete")
    return elapsed


async def main(big: int, runs: int) -> int:
    logging.disable(logging.WARNING)
    configure_llm(build_settings(llm="offline"), sink=MemorySink(),
                  provider=OfflineProvider(offline_plans()))  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        small_store = await open_store(f"sqlite:///{Path(tmp) / 'small.db'}")
        big_store = await open_store(f"sqlite:///{Path(tmp) / 'big.db'}")
        try:
            started = time.perf_counter()
            await seed(small_store, 100)
            await seed(big_store, big)
            print(f"seeded 100 and {big:,} topics in {time.perf_counter() - started:.1f} s")
            small, large = [], []
            for run in range(runs):
                small.append(await one_run(small_store, run))
                large.append(await one_run(big_store, run))
        finally:
            await small_store.close()
            await big_store.close()
    s, b = statistics.median(small), statistics.median(large)
    print(
        f"{FILES} files into 100 topics:    median {s:.3f} s  (runs: "
        + ", ".join(f"{x:.3f}" for x in small)
        + ")"
    )
    print(
        f"{FILES} files into {big:,} topics: median {b:.3f} s  (runs: "
        + ", ".join(f"{x:.3f}" for x in large)
        + ")"
    )
    print(f"ratio {b / s:.2f}× (goal ≤ {GOAL}×)")
    return 0 if b / s <= GOAL else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.big, args.runs)))
