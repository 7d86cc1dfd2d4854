"""Request/reply latency: shared.bus (FastStream) vs raw nats-py, between two OS processes.

Starts an embedded nats-server in a temp dir and a child process that serves three
`rpc.` subjects: raw nats-py (the baseline), a plain FastStream subscriber answered via
`broker.request` (FastStream's own pipeline, for reference), and `shared.bus.serve_rpc`
answered via `shared.bus.request` (typed models, error replies; what services use). The
parent sends sequential requests, alternating the paths in rounds so drift hits them
alike, and prints p50/p99 and the ratio to the baseline (goal: shared.bus ≤ 2× raw).

    python bench/bench_bus_rpc.py [--requests 5000]

Exits non-zero only when the run is broken (server, child or a reply fails).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import nats
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from shared.bus import build_broker, request, serve_rpc  # noqa: E402
from shared.runtime import EmbeddedNatsServer  # noqa: E402

RAW, BARE, TYPED = "rpc.bench.raw", "rpc.bench.bare", "rpc.bench.typed"
GOAL = 2.0


class Ping(BaseModel):
    seq: int
    text: str


class Pong(BaseModel):
    seq: int
    text: str


async def serve(url: str) -> None:
    """Child process: answer on all three subjects until stdin closes."""
    nc = await nats.connect(url, name="bench-raw-responder")

    async def raw_echo(msg: nats.aio.msg.Msg) -> None:
        await msg.respond(msg.data)

    await nc.subscribe(RAW, queue=RAW, cb=raw_echo)

    broker = build_broker(url, name="bench-fs-responder")

    @broker.subscriber(BARE, queue=BARE)
    async def bare_echo(body: Any) -> Any:
        return body

    async def typed_echo(req: Ping) -> Pong:
        return Pong(seq=req.seq, text=req.text)

    await broker.start()
    await serve_rpc(broker, TYPED, request_model=Ping, handler=typed_echo)
    await nc.flush()
    print("READY", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await broker.stop()
    await nc.close()


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of values, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def measure(url: str, n: int, rounds: int) -> dict[str, list[float]]:
    """Sequential requests on each path, alternating in rounds; latencies in ms."""
    nc = await nats.connect(url, name="bench-raw-client")
    broker = build_broker(url, name="bench-fs-client")
    await broker.connect()
    payload = Ping(seq=0, text="x" * 64)

    async def raw_call(i: int) -> None:
        reply = await nc.request(RAW, payload.model_dump_json().encode(), timeout=5)
        if not reply.data:
            raise RuntimeError("empty raw reply")

    async def bare_call(i: int) -> None:
        reply = await broker.request(payload.model_dump_json().encode(), BARE, timeout=5)
        if not reply.body:
            raise RuntimeError("empty FastStream reply")

    async def typed_call(i: int) -> None:
        pong = await request(broker, TYPED, Ping(seq=i, text=payload.text), response_model=Pong)
        if pong.seq != i:
            raise RuntimeError(f"wrong reply {pong.seq} for {i}")

    paths: dict[str, Callable[[int], Awaitable[None]]] = {
        "raw nats-py": raw_call,
        "faststream pipeline": bare_call,
        "shared.bus rpc": typed_call,
    }
    for call in paths.values():  # warm-up: connections, inbox subscriptions, caches
        for i in range(200):
            await call(i)
    results: dict[str, list[float]] = {name: [] for name in paths}
    per_round = n // rounds
    for _ in range(rounds):
        for name, call in paths.items():
            samples = results[name]
            for i in range(per_round):
                t0 = time.perf_counter()
                await call(i)
                samples.append((time.perf_counter() - t0) * 1000)
    await broker.stop()
    await nc.close()
    return results


def main() -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--serve", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve(args.serve))
        return 0
    if args.requests < args.rounds or args.rounds < 1:
        parser.error("--requests must be >= --rounds >= 1")

    with tempfile.TemporaryDirectory() as tmp, EmbeddedNatsServer(Path(tmp)) as server:
        child = subprocess.Popen(
            [sys.executable, __file__, "--serve", server.url],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            line = child.stdout.readline() if child.stdout else ""
            if line.strip() != "READY":
                print(f"responder failed to start: {line!r}", file=sys.stderr)
                return 1
            results = asyncio.run(measure(server.url, args.requests, args.rounds))
        finally:
            if child.stdin:
                child.stdin.close()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()

    base50, base99 = pct(results["raw nats-py"], 0.5), pct(results["raw nats-py"], 0.99)
    print(f"rpc request/reply, {args.requests} sequential requests per path, 2 processes")
    print(
        f"{'path':<20} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8} {'p50 ×raw':>9} {'p99 ×raw':>9}"
    )
    for name, samples in results.items():
        p50, p99 = pct(samples, 0.5), pct(samples, 0.99)
        print(
            f"{name:<20} {p50:8.3f} {p99:8.3f} {statistics.fmean(samples):8.3f} "
            f"{p50 / base50:9.2f} {p99 / base99:9.2f}"
        )
    ratio = pct(results["shared.bus rpc"], 0.5) / base50
    verdict = "meets" if ratio <= GOAL else "misses"
    print(f"shared.bus / raw at p50: {ratio:.2f}× ({verdict} the ≤ {GOAL:g}× goal)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
