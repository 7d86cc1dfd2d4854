"""Handbook sync cost in GitHub requests: a ~900-file handbook in ~220 folders.

The fake GitHub (real HTTP, real git tree and blob shas, ETag / 304, rate-limit headers)
serves the repository; extraction runs through the offline provider. Printed: requests and
wall time of the first sync, of a no-op sync (goal ≤ 2 requests), of a no-op sync after
the cached tree was lost, and of a sync after one edit, one rename and one deletion.

    python bench/bench_sync.py [--files 900]

Exits non-zero when the no-op sync costs more than 2 requests or a sync is broken.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from services.extractor.config import ExtractOptions  # noqa: E402
from services.extractor.handbook import sync_handbook  # noqa: E402
from services.extractor.offline import offline_plans  # noqa: E402
from shared.config import build_settings  # noqa: E402
from shared.llm import MemorySink, OfflineProvider, configure_llm  # noqa: E402
from shared.store import Store, open_store  # noqa: E402
from tests.services.extractor.fake_github import FakeGitHub  # noqa: E402

GOAL = 2


def handbook(files: int) -> dict[str, bytes]:
    """A handbook shaped like a real one: nested folders, many index.md files."""
    out: dict[str, bytes] = {}
    for n in range(files):
        folder = n // 4  # four pages a folder, like a real handbook's sections
        area = folder % 12
        name = "index.md" if n % 4 == 0 else f"pagina-{n}.md"
        body = "".join(
            f"## Onderwerp {n}-{s}\nDit onderdeel beschrijft regel {n}-{s} van het handboek. "
            f"Zie ook onderwerp {max(n - 1, 0)}-{s}.\n\n"
            for s in range(3)
        )
        out[f"handbook/gebied-{area}/map-{folder}/{name}"] = f"# Pagina {n}\n\n{body}".encode()
    return out


async def timed_sync(store: Store, github: FakeGitHub, settings: Any) -> tuple[Any, int, float]:
    before = len(github.requests)
    started = time.perf_counter()
    options = ExtractOptions(max_chunk_chars=6000, overlap_chars=0)
    report = await sync_handbook(store=store, settings=settings, limiter=None, options=options)
    return report, len(github.requests) - before, time.perf_counter() - started


async def main(files: int) -> int:
    logging.disable(logging.WARNING)
    configure_llm(build_settings(llm="offline"), sink=MemorySink(),
                  provider=OfflineProvider(offline_plans()))  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp, FakeGitHub() as github:
        github.rate_limit = 1_000_000
        github.files = handbook(files)
        folders = len({p.rsplit("/", 1)[0] for p in github.files})
        settings = build_settings(github_api_url=github.url, handbook_owner=github.owner,
                                  handbook_repo=github.repo, handbook_path="handbook",
                                  handbook_branch=github.branch)  # fmt: skip
        store = await open_store(f"sqlite:///{Path(tmp) / 'kb.db'}")
        try:
            print(f"handbook: {len(github.files)} files in {folders} folders")
            first, n1, t1 = await timed_sync(store, github, settings)
            print(
                f"first sync:          {n1:4d} GitHub requests, {t1:6.2f} s "
                f"({first.count('changed')} files extracted, {first.count('failed')} failed)"
            )
            noop, n2, t2 = await timed_sync(store, github, settings)
            print(
                f"no-op sync:          {n2:4d} GitHub requests, {t2:6.2f} s "
                f"(goal ≤ {GOAL}; {github.requests[-1].status} for the tree)"
            )
            await store.handbook_trees.clear()
            _, n3, t3 = await timed_sync(store, github, settings)
            print(f"no-op, cache lost:   {n3:4d} GitHub requests, {t3:6.2f} s")
            paths = sorted(github.files)
            github.files[paths[1]] += b"\n## Nieuw onderdeel\nEen toegevoegde regel.\n"
            github.files[paths[2].replace(".md", "-nieuw.md")] = github.files.pop(paths[2])
            del github.files[paths[3]]
            edit, n4, t4 = await timed_sync(store, github, settings)
            print(
                f"edit+rename+delete:  {n4:4d} GitHub requests, {t4:6.2f} s "
                f"({edit.count('changed')} changed, {edit.count('renamed')} renamed, "
                f"{edit.count('deleted')} deleted, {len(edit.removed_ids)} topics removed)"
            )
        finally:
            await store.close()
    broken = first.count("failed") or noop.count("changed") or edit.count("changed") != 1
    if broken:
        print("error: a sync did not do what it should")
        return 1
    return 0 if n2 <= GOAL else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=900)
    sys.exit(asyncio.run(main(parser.parse_args().files)))
