"""Store benchmark: bulk graph writes through the repository vs raw sqlite3, and full reads.

Run: python bench/bench_store.py [--runs N]
Prints medians and the ratio against a raw `sqlite3.executemany` baseline measured in the
same run on fresh temp files (goal: ratio <= 3x). Exits non-zero only on a broken run.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shared.store import Relation, Topic, TopicMetadata, open_store
from shared.store.sqlite.db import dumps

N_TOPICS, N_RELATIONS = 10_000, 20_000
TYPES = ("concept", "role", "process")
REL_TYPES = ("related_to", "depends_on", "part_of", "executed_by")


def make_graph() -> tuple[list[Topic], list[Relation]]:
    """10k topics and 20k distinct relations between them (built outside the timings)."""
    topics = [
        Topic(
            id=f"topic-{i:05d}",
            label=f"Topic {i}",
            type=TYPES[i % 3],  # type: ignore[arg-type]
            description=f"Description of topic {i}, long enough to look like real text. " * 2,
            metadata=TopicMetadata(source=f"handbook/page-{i % 300}.md", prompt_version="x-v2"),
        )
        for i in range(N_TOPICS)
    ]
    relations = []
    for i in range(N_RELATIONS):
        source = i % N_TOPICS
        target = (source + 1 + (i // N_TOPICS) * 7919) % N_TOPICS
        relations.append(
            Relation(
                source=f"topic-{source:05d}",
                target=f"topic-{target:05d}",
                type=REL_TYPES[i % 4],  # type: ignore[arg-type]
            )
        )
    return topics, relations


RAW_SCHEMA = """
CREATE TABLE topics (id TEXT PRIMARY KEY, label TEXT NOT NULL, type TEXT NOT NULL,
    description TEXT NOT NULL, learning_relevance TEXT NOT NULL, relevance_locked INTEGER NOT NULL,
    metadata TEXT NOT NULL, created_at TEXT, updated_at TEXT) WITHOUT ROWID;
CREATE TABLE relations (source TEXT NOT NULL, target TEXT NOT NULL, type TEXT NOT NULL,
    description TEXT, PRIMARY KEY (source, target, type)) WITHOUT ROWID;
CREATE INDEX relations_target ON relations (target);
"""


def raw_write(
    path: Path,
    topic_rows: Sequence[tuple[object, ...]],
    relation_rows: Sequence[tuple[object, ...]],
) -> float:
    """The baseline: plain executemany of the same rows into an equivalent schema."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(RAW_SCHEMA)
    start = time.perf_counter()
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("INSERT INTO topics VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", topic_rows)
    conn.execute("COMMIT")
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany("INSERT INTO relations VALUES (?, ?, ?, ?)", relation_rows)
    conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed


def raw_read(path: Path) -> float:
    """The read baseline: fetch every row of both tables as tuples (no models)."""
    conn = sqlite3.connect(path)
    start = time.perf_counter()
    topics = conn.execute("SELECT * FROM topics ORDER BY id").fetchall()
    relations = conn.execute("SELECT * FROM relations ORDER BY source, target, type").fetchall()
    elapsed = time.perf_counter() - start
    conn.close()
    if len(topics) != N_TOPICS or len(relations) != N_RELATIONS:
        raise SystemExit("broken run: raw read returned the wrong counts")
    return elapsed


async def stall_during(work: Callable[[], Awaitable[object]]) -> tuple[float, float]:
    """Run work while a 1 ms ticker measures the longest event-loop stall (seconds)."""
    worst = 0.0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal worst
        last = time.perf_counter()
        while not done.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            worst = max(worst, now - last)
            last = now

    task = asyncio.create_task(ticker())
    start = time.perf_counter()
    await work()
    elapsed = time.perf_counter() - start
    done.set()
    await task
    return elapsed, worst


async def repo_run(
    path: Path, topics: list[Topic], relations: list[Relation]
) -> tuple[float, float, float]:
    """Bulk upsert through the repositories; returns (write s, worst loop stall s, read s)."""
    store = await open_store(f"sqlite:///{path}")
    try:

        async def write() -> None:
            await store.topics.upsert_many(topics)
            await store.relations.upsert_many(relations)

        elapsed, stall = await stall_during(write)
        counts = await store.topics.counts()
        n_rel = sum((await store.relations.count_by_type()).values())
        if counts.total != N_TOPICS or n_rel != N_RELATIONS:
            raise SystemExit(f"broken run: {counts.total} topics, {n_rel} relations stored")
        start = time.perf_counter()
        got_topics, got_relations = await store.topics.list(), await store.relations.list()
        read = time.perf_counter() - start
        if len(got_topics) != N_TOPICS or len(got_relations) != N_RELATIONS:
            raise SystemExit("broken run: full read returned the wrong counts")
        return elapsed, stall, read
    finally:
        await store.close()


async def point_ops(path: Path, n: int = 300) -> tuple[float, float]:
    """Median latency of one small write and one point read through the worker thread."""
    store = await open_store(f"sqlite:///{path}")
    try:
        writes, reads = [], []
        for i in range(n):
            start = time.perf_counter()
            await store.flags.set(f"k{i % 10}", {"i": i})
            writes.append(time.perf_counter() - start)
            start = time.perf_counter()
            await store.topics.get("topic-00042")
            reads.append(time.perf_counter() - start)
        return statistics.median(writes), statistics.median(reads)
    finally:
        await store.close()


def main() -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    topics, relations = make_graph()
    stamp = "2026-01-01T00:00:00.000+00:00"
    topic_rows = [
        (t.id, t.label, t.type, t.description, t.learning_relevance, 0,
         dumps(t.metadata.model_dump(exclude_none=True)), stamp, stamp)
        for t in topics
    ]  # fmt: skip
    relation_rows = [(r.source, r.target, r.type, r.description) for r in relations]

    repo_times, stalls, reads, raw_times, raw_reads = [], [], [], [], []
    for _ in range(max(args.runs, 3)):
        with tempfile.TemporaryDirectory() as tmp:
            elapsed, stall, read = asyncio.run(repo_run(Path(tmp) / "repo.db", topics, relations))
            repo_times.append(elapsed)
            stalls.append(stall)
            reads.append(read)
            raw_times.append(raw_write(Path(tmp) / "raw.db", topic_rows, relation_rows))
            raw_reads.append(raw_read(Path(tmp) / "raw.db"))
    with tempfile.TemporaryDirectory() as tmp:
        write_lat, read_lat = asyncio.run(point_ops(Path(tmp) / "point.db"))

    repo, raw = statistics.median(repo_times), statistics.median(raw_times)
    ratio = repo / raw
    print(
        f"bulk write {N_TOPICS:,} topics + {N_RELATIONS:,} relations, median of {len(repo_times)}:"
    )
    print(f"  repository upsert_many : {repo * 1000:8.1f} ms")
    print(f"  raw sqlite3.executemany: {raw * 1000:8.1f} ms")
    verdict = "met" if ratio <= 3 else "NOT met"
    print(f"  ratio                  : {ratio:8.2f}x  (goal <= 3x: {verdict})")
    print(f"  worst event-loop stall during the repository write: {max(stalls) * 1000:.1f} ms "
          f"(the write itself runs in the store's worker thread)")  # fmt: skip
    read, raw_rd = statistics.median(reads), statistics.median(raw_reads)
    print(f"full KB read (topics.list + relations.list) at {N_TOPICS:,} topics: "
          f"median {read * 1000:.1f} ms (raw fetchall of the same rows: {raw_rd * 1000:.1f} ms, "
          f"{read / raw_rd:.1f}x: validated pydantic models)")  # fmt: skip
    print(f"point ops, median of 300: flags.set {write_lat * 1000:.2f} ms, "
          f"topics.get {read_lat * 1000:.2f} ms")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
