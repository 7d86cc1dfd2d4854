"""What numba costs the r42 process: RSS and start-up time with and without the compiled path.

Run: python bench/bench_retrieval_footprint.py [--runs 5]
Each run is a fresh interpreter that imports the r42 service's knowledge module, indexes
the bundled sample handbook (what a newcomer's stack holds) and answers one search, then
reports its RSS and the time taken. "numpy" is the default below 2,000 topics (numba never
imported); "numba" forces the compiled kernels on the same KB (numba imported, kernels
loaded from the on-disk cache after a first warm-up run). Medians over the runs, the
difference and the ratio. Exits non-zero only when a run is broken.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import json, sys, time
started = time.perf_counter()
import psutil
from services.r42 import knowledge  # noqa: F401  (the service's import chain)
from shared.kb import RetrievalIndex, scoring, topics_from_markdown
from pathlib import Path
if sys.argv[1] == "numba":
    scoring.NUMBA_MIN_TOPICS = 0
topics = []
for path in sorted(Path("services/extractor/sample_handbook").glob("*.md")):
    topics.extend(topics_from_markdown(path.read_text(encoding="utf-8"), source=path.name))
index = RetrievalIndex.build(topics)
hits = index.search("Hoe werkt het pensioen?")
elapsed = time.perf_counter() - started
print(json.dumps({
    "rss_mb": psutil.Process().memory_info().rss / 2**20,
    "seconds": elapsed,
    "numba": "numba" in sys.modules,
    "topics": len(index),
    "hits": len(hits),
}))
"""


def one(mode: str) -> dict[str, float]:
    """One fresh interpreter's figures."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, mode], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> int:
    """Measure both modes in alternation and print medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    one("numba")  # warm the kernels' on-disk cache: later runs load, not compile
    rows: dict[str, list[dict[str, float]]] = {"numpy": [], "numba": []}
    for _ in range(args.runs):
        for mode in rows:
            rows[mode].append(one(mode))
    if any(r["numba"] != (mode == "numba") or not r["hits"] for mode in rows for r in rows[mode]):
        print("BROKEN: a run loaded numba when it should not (or found nothing)")
        return 1
    rss = {mode: statistics.median(r["rss_mb"] for r in rs) for mode, rs in rows.items()}
    secs = {mode: statistics.median(r["seconds"] for r in rs) for mode, rs in rows.items()}
    topics = int(rows["numpy"][0]["topics"])
    print(f"r42 knowledge import + sample handbook index ({topics} topics) + one search, "
          f"{args.runs} runs each (medians)")  # fmt: skip
    print(f"  {'':10}{'numpy':>10}{'numba':>10}{'diff':>10}{'numba/numpy':>13}")
    for label, values, fmt in (("RSS MB", rss, ".1f"), ("seconds", secs, ".2f")):
        numpy, numba = values["numpy"], values["numba"]
        print(f"  {label:10}{numpy:10{fmt}}{numba:10{fmt}}{numba - numpy:10{fmt}}"
              f"{numba / numpy:12.2f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
