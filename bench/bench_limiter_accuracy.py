"""Accuracy and decision latency of the NATS KV limiter across OS processes.

Starts an embedded nats-server in a temp dir, then 4 worker processes x 8 asyncio tasks
hammer one budget (50 requests/s, burst 10) for 6 s. Prints admitted vs the theoretical
maximum (burst + rate x time) and the p50/p99 time each decision took (excluding the
intentional waits), over the whole run and after the synchronised start. The same run
repeats with the textbook naive limiter (each task reads the GCRA state, checks, and puts
it back unconditionally) to show what compare-and-swap buys.

Run: .venv/bin/python bench/bench_limiter_accuracy.py   (exits non-zero only if broken)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import nats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from shared.llm.limiter import Budget, ClassLimits, LimiterConfig, NatsKvLimiter  # noqa: E402
from shared.llm.limiter_gcra import gcra_step  # noqa: E402
from shared.llm.limiter_kv import bind_bucket, decode_state, encode_state, read  # noqa: E402
from shared.runtime import EmbeddedNatsServer  # noqa: E402

PROCESSES = 4
TASKS = 8
RATE_PER_S = 50.0
BURST = 10.0
DURATION_S = 6.0
STEADY_AFTER_S = 0.2
MODEL = "claude-sonnet-4-5"
WARMUP_MODEL = "claude-haiku-4-5"


def bench_config() -> LimiterConfig:
    """One tight request budget; token budgets out of the way."""
    huge = Budget(per_minute=1e12)
    limits = ClassLimits(
        requests=Budget(per_minute=RATE_PER_S * 60, burst=BURST),
        input_tokens=huge,
        output_tokens=huge,
    )
    unlimited = ClassLimits(requests=huge, input_tokens=huge, output_tokens=huge)
    return LimiterConfig(classes={"sonnet": limits, "haiku": unlimited})


async def naive_worker(url: str, bucket: str, start: float, latencies: list) -> int:
    """The textbook anti-pattern: every task reads, checks and puts; sleeps when refused."""
    nc = await nats.connect(url)
    kv = await bind_bucket(nc, bucket, op_timeout_s=5.0)
    rate = bench_config().limits_for("sonnet").requests.rate()
    end, admitted = start + DURATION_S, 0

    async def task() -> None:
        nonlocal admitted
        await asyncio.sleep(max(0.0, start - time.time()))
        while time.time() < end:
            began = time.perf_counter()
            raw, revision = await read(kv, "gcra.sonnet")
            tat = decode_state(raw)[0] if revision is not None else 0.0
            step = gcra_step(tat, time.time(), 1, rate)
            if step.admitted:
                await kv.put("gcra.sonnet", encode_state((step.tat, 0.0, 0.0)))
            latencies.append((time.time(), time.perf_counter() - began))
            if not step.admitted:
                await asyncio.sleep(step.wait)
            elif time.time() <= end:
                admitted += 1

    await asyncio.gather(*(task() for _ in range(TASKS)))
    await nc.close()
    return admitted


async def worker(url: str, bucket: str, variant: str) -> None:
    """One process: connect, warm up, report ready, run TASKS tasks until the window closes."""
    latencies: list[tuple[float, float]] = []
    if variant == "naive":
        print("ready", flush=True)
        start = float(await asyncio.to_thread(sys.stdin.readline))
        admitted = await naive_worker(url, bucket, start, latencies)
        print(json.dumps({"admitted": admitted, "latencies": latencies, "conflicts": 0}))
        return
    limiter = await NatsKvLimiter.connect(url, bucket=bucket, config=bench_config())
    if limiter.mode != "nats":
        raise SystemExit("worker could not reach NATS")
    limiter.decision_observer = lambda took: latencies.append((time.time(), took))
    # Warm up (connection, watcher, code paths) on another class, as a running service
    # would be; only then does the clock start.
    for _ in range(20):
        await limiter.acquire(model=WARMUP_MODEL, input_tokens=0, output_tokens=0)
    latencies.clear()
    limiter.stats.cas_conflicts = 0
    print("ready", flush=True)
    start = float(await asyncio.to_thread(sys.stdin.readline))
    end = start + DURATION_S
    admitted = 0

    async def task() -> None:
        nonlocal admitted
        await asyncio.sleep(max(0.0, start - time.time()))
        while time.time() < end:
            await limiter.acquire(model=MODEL, input_tokens=0, output_tokens=0)
            if time.time() <= end:
                admitted += 1

    tasks = [asyncio.ensure_future(task()) for _ in range(TASKS)]
    await asyncio.sleep(max(0.0, end - time.time()) + 0.3)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await limiter.aclose()
    out = {"admitted": admitted, "latencies": latencies, "conflicts": limiter.stats.cas_conflicts}
    print(json.dumps(out), flush=True)


def run_variant(url: str, variant: str) -> dict[str, object]:
    """Spawn the workers, start them together, collect their counts and latencies."""
    bucket = f"bench_{variant}_{uuid.uuid4().hex[:8]}"
    cmd = [sys.executable, __file__, "--worker", url, bucket, variant]
    procs = [
        subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        for _ in range(PROCESSES)
    ]
    try:
        for p in procs:
            assert p.stdout is not None
            if p.stdout.readline().strip() != "ready":
                raise SystemExit(f"{variant} worker failed to start")
        start = time.time() + 0.3
        for p in procs:
            assert p.stdin is not None
            p.stdin.write(f"{start}\n")
            p.stdin.flush()
        results = []
        for p in procs:
            out, _ = p.communicate(timeout=DURATION_S + 30)
            if p.returncode != 0:
                raise SystemExit(f"{variant} worker exited with {p.returncode}")
            results.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    samples = [(t - start, took) for r in results for t, took in r["latencies"]]
    return {
        "admitted": sum(r["admitted"] for r in results),
        "conflicts": sum(r["conflicts"] for r in results),
        "latencies": sorted(took for _, took in samples),
        "steady": sorted(took for t, took in samples if t >= STEADY_AFTER_S),
    }


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of sorted values, in milliseconds."""
    return 1000 * statistics.quantiles(values, n=1000)[int(q * 1000) - 1]


def describe(lat: list[float]) -> str:
    """p50 / p99 / max of decision latencies in ms."""
    if len(lat) < 2:
        return "n/a"
    return f"p50 {pct(lat, 0.5):.2f} ms, p99 {pct(lat, 0.99):.2f} ms, max {1000 * lat[-1]:.2f} ms"


def main() -> int:
    """Run both variants against one embedded nats-server and print the figures."""
    theoretical = BURST + RATE_PER_S * DURATION_S
    print(
        f"limiter accuracy: {PROCESSES} processes x {TASKS} tasks, {RATE_PER_S:g}/s burst "
        f"{BURST:g}, {DURATION_S:g} s -> theoretical max {theoretical:g}"
    )
    with tempfile.TemporaryDirectory() as tmp, EmbeddedNatsServer(Path(tmp)) as server:
        cas = run_variant(server.url, "cas")
        naive = run_variant(server.url, "naive")
    ratio = cas["admitted"] / theoretical
    lat = cas["latencies"]
    p99 = pct(lat, 0.99) if len(lat) > 1 else float("inf")
    print(
        f"NatsKvLimiter (CAS):  admitted {cas['admitted']} = {ratio:.3f}x theoretical "
        f"(goal 0.97-1.01) {'OK' if 0.97 <= ratio <= 1.01 else 'MISS'}; "
        f"CAS conflicts {cas['conflicts']}"
    )
    print(
        f"  decision latency, {len(lat)} decisions: {describe(lat)} "
        f"(goal p99 <= 10 ms) {'OK' if p99 <= 10 else 'MISS'}"
    )
    print(
        f"  after the synchronised start (t >= {STEADY_AFTER_S:g} s, {len(cas['steady'])} "
        f"decisions): {describe(cas['steady'])}"
    )
    print(
        f"naive get-then-put (every task reads, checks, puts; no CAS): admitted "
        f"{naive['admitted']} = {naive['admitted'] / theoretical:.2f}x theoretical; "
        f"decisions {describe(naive['latencies'])}"
    )
    if cas["admitted"] == 0 or not lat:
        print("broken run: nothing admitted")
        return 1
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=3, metavar=("URL", "BUCKET", "VARIANT"))
    args = parser.parse_args()
    if args.worker:
        asyncio.run(worker(*args.worker))
        sys.exit(0)
    sys.exit(main())
