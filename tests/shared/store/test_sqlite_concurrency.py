"""Several OS processes writing one SQLite file at once lose no update."""

from __future__ import annotations

import asyncio
import multiprocessing
import subprocess
import sys
import time
from pathlib import Path

from shared.store import open_store
from tests.shared.store._opener import open_rounds

ROOT = Path(__file__).resolve().parents[3]
PROCESSES, ROUNDS = 4, 40


async def _migrate(url: str) -> None:
    store = await open_store(url)
    await store.close()


async def _final_state(url: str) -> tuple[dict[str, int], set[str], list[str]]:
    store = await open_store(url)
    try:
        labels = [t.label for t in await store.topics.list(type="concept")]
        names = ["counter", *(f"done-{i}" for i in range(PROCESSES))]
        counts = {n: (await store.merge_progress.get(n)).topics_added for n in names}
        return counts, await store.topics.ids(), labels
    finally:
        await store.close()


def _run_writers(db: Path, sync_dir: Path) -> list[tuple[int, str]]:
    command = [sys.executable, "-m", "tests.shared.store._writer", str(db)]
    workers = [
        subprocess.Popen(
            [*command, str(i), str(ROUNDS), str(sync_dir)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for i in range(PROCESSES)
    ]
    try:
        deadline = time.monotonic() + 60
        # Release all writers at once so their transactions really overlap.
        while len(list(sync_dir.glob("ready-*"))) < PROCESSES:
            assert all(w.poll() is None for w in workers), "a writer died before starting"
            assert time.monotonic() < deadline, "writers did not get ready"
            time.sleep(0.01)
        (sync_dir / "go").touch()
        return [(w.wait(timeout=60), w.stderr.read().decode()) for w in workers]  # type: ignore[union-attr]
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()


def test_four_processes_lose_no_update(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    url = f"sqlite:///{db}"
    sync_dir = tmp_path / "sync"
    sync_dir.mkdir()
    asyncio.run(_migrate(url))  # the workers race on data, not on creating the schema

    assert _run_writers(db, sync_dir) == [(0, "")] * PROCESSES

    counts, ids, labels = asyncio.run(_final_state(url))
    assert counts == {"counter": PROCESSES * ROUNDS} | {
        f"done-{i}": ROUNDS for i in range(PROCESSES)
    }
    own = {f"own-{i}-{r}" for i in range(PROCESSES) for r in range(ROUNDS)}
    assert ids == own | {f"shared-{k}" for k in range(10)}
    writers = {f"p{i}" for i in range(PROCESSES)}
    assert all(label.split()[0] in writers for label in labels)


def test_schema_creation_races_are_safe(tmp_path: Path) -> None:
    # Every service opens (and migrates) the store at start-up, all at once.
    url = f"sqlite:///{tmp_path / 'fresh.db'}"

    async def open_many() -> list[int]:
        stores = await asyncio.gather(*(open_store(url) for _ in range(4)))
        versions = [await s.schema_version() for s in stores]
        for s in stores:
            await s.close()
        return versions

    versions = asyncio.run(open_many())
    assert len(set(versions)) == 1 and versions[0] >= 4


def test_four_processes_opening_a_fresh_file_at_once_all_succeed(tmp_path: Path) -> None:
    # `r42 up` starts every service at once and each opens and migrates the store: the
    # switch to WAL must not fail when another process is switching at the same moment.
    rounds, processes = 200, 4
    spawn = multiprocessing.get_context("spawn")
    barrier, results = spawn.Barrier(processes), spawn.Queue()
    workers = [
        spawn.Process(target=open_rounds, args=(str(tmp_path), rounds, barrier, results))
        for _ in range(processes)
    ]
    for worker in workers:
        worker.start()
    try:
        outcomes = [results.get(timeout=120) for _ in workers]
    finally:
        for worker in workers:
            worker.join(timeout=10)
            if worker.is_alive():
                worker.kill()
    failures = [o for per_process in outcomes for o in per_process if not o.startswith("ok")]
    assert failures == []
    assert [len(o) for o in outcomes] == [rounds] * processes
    assert {o for per_process in outcomes for o in per_process} == {"ok wal"}
