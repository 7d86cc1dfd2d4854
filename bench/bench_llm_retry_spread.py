"""Full-jitter retry spread: 100 concurrent `call_llm` calls that each get one 529 first.

The fake Anthropic server answers every request's first attempt with 529 overloaded and
its second with a text reply. With the production policy (base 1 s, full jitter) the
retries should spread evenly over ~1 s instead of arriving as a second burst. Retry
arrival times at the fake are bucketed into 100 ms buckets over the retry window; the
busiest bucket is compared with the mean bucket (goal ≤ 2×). Same-run baseline: the same
figure for the first attempts, which arrive as one burst.

    python bench/bench_llm_retry_spread.py [--calls 100] [--rounds 5]

Exits non-zero only when the run is broken (a call fails or the attempt counts are off).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from shared.config import build_settings  # noqa: E402
from shared.llm import MemorySink, RetryPolicy, call_llm, configure_llm, reset_llm  # noqa: E402

GOAL = 2.0
BUCKET_S = 0.1

# The fake runs in a child process so its CPU work doesn't smooth (or skew) our timing.
# Any line on stdin → one JSON line of [monotonic arrival, status, key] since the last one.
SERVER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from tests.fakes.anthropic_server import FakeAnthropic, overloaded, text_reply
seen = set()
def responder(body):
    key = body["messages"][0]["content"]
    if key in seen:
        return text_reply("ok")
    seen.add(key)  # the server's single event loop calls this: no lock needed
    return overloaded()
with FakeAnthropic() as fake:
    fake.default = responder
    print(fake.url, flush=True)
    for line in sys.stdin:
        requests = fake.requests
        fake.clear()
        rows = [[r.monotonic, r.status, r.body["messages"][0]["content"]] for r in requests]
        print(json.dumps(rows), flush=True)
"""


def bucket_ratio(times: list[float]) -> tuple[int, float, int]:
    """(busiest bucket, mean per bucket, buckets): equal ~100 ms buckets spanning `times`."""
    start, span = min(times), max(times) - min(times)
    n_buckets = max(round(span / BUCKET_S), 1)
    width = span / n_buckets or BUCKET_S
    counts = [0] * n_buckets
    for t in times:
        counts[min(int((t - start) / width), n_buckets - 1)] += 1
    return max(counts), len(times) / n_buckets, n_buckets


def ideal_ratio(calls: int, trials: int = 2000) -> float:
    """Median busiest/mean for perfectly uniform draws over 1 s: what pure chance gives."""
    rng = random.Random(42)
    ratios = []
    for _ in range(trials):
        peak, mean, _ = bucket_ratio([rng.uniform(0.0, 1.0) for _ in range(calls)])
        ratios.append(peak / mean)
    return statistics.median(ratios)


async def one_round(
    server: subprocess.Popen[str], calls: int, round_no: int
) -> tuple[float, float]:
    """Run `calls` concurrent calls; return (retry busiest/mean, first-attempt busiest/mean)."""
    results = await asyncio.gather(
        *(call_llm(task="bench", tier="fast", user=f"r{round_no}-call-{i}") for i in range(calls)),
        return_exceptions=True,
    )
    failures = [r for r in results if isinstance(r, BaseException)]
    if failures:
        raise SystemExit(f"broken run: {len(failures)} calls failed, e.g. {failures[0]!r}")
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write("dump\n")
    server.stdin.flush()
    requests = json.loads(server.stdout.readline())
    first = {key: t for t, status, key in requests if status == 529}
    retry = {key: t for t, status, key in requests if status == 200}
    if len(first) != calls or retry.keys() != first.keys():
        raise SystemExit(f"broken run: {len(first)} first attempts, {len(retry)} retries")
    peak, mean, n = bucket_ratio(list(retry.values()))
    first_peak, _, _ = bucket_ratio(list(first.values()))
    # Each call's own backoff (retry arrival − its first arrival), free of the first-attempt spread.
    delays = [retry[key] - first[key] for key in first]
    delay_peak, delay_mean, _ = bucket_ratio(delays)
    window = max(retry.values()) - min(retry.values())
    burst = max(first.values()) - min(first.values())
    print(
        f"round {round_no}: {calls}/{calls} completed; retries over {window:.2f} s in {n} "
        f"buckets: busiest {peak}, mean {mean:.1f} → {peak / mean:.2f}× | per-call backoff "
        f"{min(delays):.2f}–{max(delays):.2f} s, {delay_peak / delay_mean:.2f}× | first "
        f"attempts: spread {burst * 1e3:.0f} ms, {first_peak} in the busiest bucket"
    )
    # Baseline: the first attempts' busiest bucket vs the same mean bucket of the retry window.
    return peak / mean, first_peak / mean


async def run(server: subprocess.Popen[str], url: str, calls: int, rounds: int) -> None:
    settings = build_settings(
        anthropic_base_url=url, anthropic_api_key="fake-bench-key-not-real", llm="anthropic"
    )
    runtime = configure_llm(settings, sink=MemorySink(), retry=RetryPolicy())  # base 1 s
    ratios = [await one_round(server, calls, i + 1) for i in range(rounds)]
    await runtime.aclose()
    reset_llm()
    spread = statistics.median(r for r, _ in ratios)
    burst = statistics.median(b for _, b in ratios)
    verdict = "ok" if spread <= GOAL else "ABOVE GOAL"
    print(
        f"\nmedian busiest/mean bucket for retries = {spread:.2f}× (goal ≤ {GOAL:.1f}×: "
        f"{verdict})\n  same-run baselines: first attempts (a burst) = {burst:.1f}×; "
        f"ideal uniform draws of {calls} = {ideal_ratio(calls):.2f}× (chance alone)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(ROOT)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            raise SystemExit(f"fake server did not start (got {url!r})")
        asyncio.run(run(server, url, args.calls, args.rounds))
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
