"""Chaos: kill nats-server, each service and `r42 up` during a 15-chunk ingest (offline LLM).

Prints: KB equal to an uninterrupted run (yes/no), stuck sources, lost telemetry on graceful
stops, and the time to recover (every service answering again) after each kill, median and
max. Run: `.venv/bin/python bench/bench_chaos.py` (about 5 minutes on a laptop).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

R42 = str(Path(sys.executable).parent / "r42")
CHUNKS = 15
# The gateway idles without Slack tokens, so `r42 up` does not start it here.
SERVICES = ("extractor", "r42", "content", "quiz", "telemetry")


def document() -> str:
    """A handbook page that splits into CHUNKS chunks, one heading (→ one topic) each."""
    parts = []
    for i in range(CHUNKS):
        body = f"Chaos practice {i} is how team {i} keeps the wiki honest. " * 6
        parts.append(f"# Chaos practice {i}\n\n{body.strip()}\n")
    return "\n".join(parts)


class Stack:
    """One data dir and the `r42 up` running on it."""

    def __init__(self, data: Path, env: dict[str, str]) -> None:
        self.data, self.env = data, env
        self.proc: subprocess.Popen[bytes] | None = None

    def up(self) -> float:
        """Start `r42 up`; return seconds until it says "R42 is up"."""
        started = time.monotonic()
        out = (self.data.parent / f"{self.data.name}.up.out").open("ab")
        self.proc = subprocess.Popen(
            [R42, "up", "--no-console", "--data-dir", str(self.data)],
            stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=self.env,
        )  # fmt: skip
        log = self.data.parent / f"{self.data.name}.up.out"
        while "R42 is up" not in log.read_text()[self._seen(log) :]:
            if self.proc.poll() is not None:
                raise SystemExit(f"r42 up exited:\n{log.read_text()[-2000:]}")
            time.sleep(0.1)
        self._mark = len(log.read_text())
        return time.monotonic() - started

    _mark = 0

    def _seen(self, log: Path) -> int:
        return min(self._mark, len(log.read_text()))

    def state(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads((self.data / "runtime.json").read_text())
        return data

    def status(self) -> dict[str, Any]:
        done = subprocess.run(
            [R42, "status", "--json", "--data-dir", str(self.data)],
            capture_output=True, text=True, env=self.env, timeout=60,
        )  # fmt: skip
        doc: dict[str, Any] = json.loads(done.stdout) if done.returncode == 0 else {}
        return doc

    def wait_recovered(self, *, old_pid: int | None = None, what: str = "") -> float:
        """Seconds until every service (and NATS) answers again, with a new pid if given."""
        started = time.monotonic()
        while time.monotonic() - started < 180:
            doc = self.status()
            svcs = doc.get("services") or []
            fresh = old_pid is None or all(s["pid"] != old_pid for s in svcs)
            if doc.get("nats") and len(svcs) == len(SERVICES) and fresh:
                if all(s["ready"] for s in svcs) and (old_pid is None or fresh):
                    if old_pid is None or doc["nats"][0]["pid"] != old_pid:
                        return time.monotonic() - started
            time.sleep(0.2)
        raise SystemExit(f"did not recover from {what} within 180 s")

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(60)

    def ingest(self, path: Path) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [R42, "ingest", str(path)], env={**self.env, "R42_DATA_DIR": str(self.data)},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip

    def db(self) -> sqlite3.Connection:
        return sqlite3.connect(self.data / "r42.db")

    def kb(self) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
        with self.db() as db:
            topics = db.execute("select id, label, type from topics order by id").fetchall()
            rels = db.execute(
                "select source, target, type from relations order by 1,2,3"
            ).fetchall()
        return topics, rels

    def sources(self) -> dict[str, int]:
        with self.db() as db:
            return dict(db.execute("select status, count(*) from sources group by status"))

    def llm_calls(self) -> int:
        with self.db() as db:
            return int(db.execute("select count(*) from llm_calls").fetchone()[0])

    def wait_settled(self, *, sources: int, timeout: float = 300) -> None:
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            counts = self.sources()
            if sum(counts.values()) >= sources and set(counts) <= {"completed", "failed"}:
                return
            time.sleep(0.5)


def run(base: Path, env: dict[str, str], doc: Path, *, chaos: bool) -> dict[str, Any]:
    stack = Stack(base / ("chaos" if chaos else "calm"), env)
    recover: list[float] = []
    stack.up()
    stack.wait_settled(sources=1)  # the bundled sample handbook
    ingest = stack.ingest(doc)
    if chaos:
        time.sleep(1.0)
        # nats-server, SIGKILL
        nats_pid = stack.state()["nats_pid"]
        os.kill(nats_pid, signal.SIGKILL)
        recover.append(stack.wait_recovered(old_pid=nats_pid, what="nats-server SIGKILL"))
        # each service, SIGKILL
        for name in SERVICES:
            pid = stack.state()["services"][name]
            os.kill(pid, signal.SIGKILL)
            recover.append(stack.wait_recovered(old_pid=pid, what=f"{name} SIGKILL"))
        # `r42 up` itself, SIGKILL, then started again
        assert stack.proc is not None
        stack.proc.kill()
        stack.proc.wait()
        t0 = time.monotonic()
        stack.up()
        recover.append(time.monotonic() - t0)
    ingest.wait(600)
    stack.wait_settled(sources=2)
    time.sleep(2)  # telemetry of the last calls lands
    before_stop = stack.llm_calls()
    # Graceful stops: SIGTERM every service and the stack; every logged call must be stored.
    stack.stop(signal.SIGTERM)
    after_stop = stack.llm_calls()
    result = {
        "kb": stack.kb(),
        "stuck": sum(n for s, n in stack.sources().items() if s not in ("completed", "failed")),
        "llm_calls": after_stop,
        "lost_on_stop": max(0, before_stop - after_stop),
        "recover": recover,
    }
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="r42-chaos-"))
    doc = base / "chaos-handbook.md"
    doc.write_text(document())
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("R42_", "NATS_"))},
        "R42_LLM": "offline", "R42_EXTRACTOR_MAX_CHUNK_CHARS": "400",
        "R42_EXTRACTOR_OVERLAP_CHARS": "0",
    }  # fmt: skip
    env.pop("ANTHROPIC_API_KEY", None)
    calm = run(base, env, doc, chaos=False)
    chaos = run(base, env, doc, chaos=True)
    rec = chaos["recover"]
    print(f"bench_chaos: {CHUNKS}-chunk ingest, offline LLM, data under {base}")
    print(f"  KB equal to an uninterrupted run: {'yes' if chaos['kb'] == calm['kb'] else 'no'} "
          f"({len(chaos['kb'][0])} topics, {len(chaos['kb'][1])} relations; "
          f"uninterrupted {len(calm['kb'][0])}, {len(calm['kb'][1])})")  # fmt: skip
    print(f"  stuck sources: {chaos['stuck']} (uninterrupted {calm['stuck']})")
    print(f"  lost telemetry on graceful stops: {chaos['lost_on_stop']} "
          f"(uninterrupted {calm['lost_on_stop']}); llm_calls stored: {chaos['llm_calls']}, "
          f"uninterrupted {calm['llm_calls']}")  # fmt: skip
    print(f"  time to recover: median {statistics.median(rec):.1f} s, max {max(rec):.1f} s "
          f"over {len(rec)} kills (nats-server, {len(SERVICES)} services, r42 up)")  # fmt: skip
    print("  API calls per chunk under a persistent 5xx: measured by bench_llm_retry_spread")
    return 0 if chaos["kb"] == calm["kb"] and chaos["stuck"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
