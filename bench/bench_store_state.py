"""Store benchmark: per-request cost of idempotency keys and lease locks, typed repositories
vs the settings-document layout they replace (a 1,000-entry list and one JSON lock map).

Run: python bench/bench_store_state.py [--ops N]
Both layouts run in the same process on one fresh temp SQLite file, through the store's
worker thread; the old layout is emulated here with plain SQL on a key/JSON-value table
(the product no longer has one). Prints medians per request and the ratio old / new.
Exits non-zero only on a broken run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shared.store import Store
from shared.store.sqlite.store import SqliteStore

HANDLED = 1000  # what the content service kept in its settings list
LOCKS = 50  # live leases held by other workers while we take and drop ours
DOCUMENTS = "CREATE TABLE IF NOT EXISTS documents (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
PUT = (
    "INSERT INTO documents (key, value) VALUES (?, ?) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
)


async def doc_get(store: SqliteStore, key: str, default: Any) -> Any:
    """One document, parsed (what the old layout read on every request)."""
    sql = "SELECT value FROM documents WHERE key = ?"
    row = await store.db.read(lambda c: c.execute(sql, (key,)).fetchone())
    return json.loads(row[0]) if row else default


async def doc_set(store: SqliteStore, key: str, value: Any) -> None:
    """Write one whole document."""
    params = (key, json.dumps(value))
    await store.db.write(lambda c: c.execute(PUT, params))


async def doc_update(store: SqliteStore, key: str, fn: Callable[[Any], Any], default: Any) -> None:
    """Read-modify-write of one document in one write transaction (the old atomic update)."""

    def run(conn: sqlite3.Connection) -> None:
        row = conn.execute("SELECT value FROM documents WHERE key = ?", (key,)).fetchone()
        conn.execute(PUT, (key, json.dumps(fn(json.loads(row[0]) if row else default))))

    await store.db.write(run)


async def old_handled(store: SqliteStore, event_id: str) -> None:
    """The settings layout: scan the list, then rewrite it with the new record appended."""
    records = await doc_get(store, "handled", []) or []
    if any(r.get("event_id") == event_id for r in records):
        raise SystemExit("broken run: a fresh event id was found")

    def add(current: Any) -> list[dict[str, Any]]:
        kept = [r for r in (current or []) if r.get("event_id") != event_id]
        kept.append({"event_id": event_id, "ok": True, "topic_id": "okr"})
        return kept[-HANDLED:]

    await doc_update(store, "handled", add, [])


async def new_handled(store: Store, event_id: str) -> None:
    """The typed layout: one keyed read, one conditional insert."""
    if await store.idempotency.get("content.requested", event_id) is not None:
        raise SystemExit("broken run: a fresh event id was found")
    value = {"event_id": event_id, "ok": True, "topic_id": "okr"}
    if not await store.idempotency.put_if_absent("content.requested", event_id, value, ttl_s=3600):
        raise SystemExit("broken run: a fresh event id was refused")


async def old_lock(store: SqliteStore, name: str) -> None:
    """The settings layout: read-modify-write of one JSON map to take, and again to drop."""
    now = time.time()

    def take(current: Any) -> dict[str, Any]:
        locks = {k: v for k, v in dict(current or {}).items() if v["until"] > now}
        locks[name] = {"owner": "me", "until": now + 300}
        return locks

    def drop(current: Any) -> dict[str, Any]:
        return {k: v for k, v in dict(current or {}).items() if k != name}

    await doc_update(store, "locks", take, {})
    await doc_update(store, "locks", drop, {})


async def new_lock(store: Store, name: str) -> None:
    """The typed layout: one conditional upsert to take, one owner-checked delete to drop."""
    if not await store.locks.acquire(name, "me", ttl_s=300):
        raise SystemExit("broken run: a free lock was refused")
    await store.locks.release(name, "me")


async def measure(path: Path, ops: int) -> dict[str, float]:
    """Median seconds per request of each operation, both layouts filled alike first."""
    store = await SqliteStore.open(str(path))
    try:
        far = time.time() + 3600
        await store.db.write(lambda c: c.execute(DOCUMENTS))
        await doc_set(
            store,
            "handled",
            [{"event_id": f"pre-{i}", "ok": True, "topic_id": "t"} for i in range(HANDLED)],
        )
        await doc_set(
            store, "locks", {f"other-{i}": {"owner": "o", "until": far} for i in range(LOCKS)}
        )
        for i in range(HANDLED):
            await store.idempotency.put_if_absent("content.requested", f"pre-{i}", {}, ttl_s=3600)
        for i in range(LOCKS):
            await store.locks.acquire(f"other-{i}", "o", ttl_s=3600)
        results: dict[str, float] = {}
        cases: dict[str, Callable[[SqliteStore, str], Any]] = {
            "handled old": old_handled, "handled new": new_handled,
            "lock old": old_lock, "lock new": new_lock,
        }  # fmt: skip
        for label, fn in cases.items():
            times = []
            for i in range(ops):
                start = time.perf_counter()
                await fn(store, f"{label.split()[0]}-{label.split()[1]}-{i}")
                times.append(time.perf_counter() - start)
            results[label] = statistics.median(times)
        return results
    finally:
        await store.close()


def main() -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ops", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        got = asyncio.run(measure(Path(tmp) / "state.db", max(args.ops, 50)))
    print(f"per request, median of {max(args.ops, 50)} (SQLite, {HANDLED:,} handled ids, "
          f"{LOCKS} other live leases):")  # fmt: skip
    for kind, what in (("handled", "idempotency check + record"), ("lock", "lock take + drop")):
        old, new = got[f"{kind} old"], got[f"{kind} new"]
        print(f"  {what:28}: settings document {old * 1000:7.3f} ms, "
              f"typed repository {new * 1000:7.3f} ms, ratio {old / new:5.1f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
