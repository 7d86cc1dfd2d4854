"""429s with the shared limiter in front of a rate-limited (fake) Anthropic API.

The fake Anthropic server (tests/fakes/anthropic_server.py) enforces a sliding window of
50 requests and answers 429 with retry-after beyond it. A minute is too long for a
benchmark, so the window is scaled to 6 s (50 per 6 s = 500 RPM) and the limiter is
configured for that rate less 2 % headroom (see HEADROOM). 4 OS processes (each with a
warmed-up HTTP connection, as a running service has) offer 3x that load through
`call_llm` for DURATION_S, all sharing one NatsKvLimiter bucket on an embedded
nats-server. Prints the share of requests the window answered 429 (goal < 1 %). Midway
the fake also answers one scripted 429 (retry-after 2 s), so that a pause is always
announced; the fake's recorded arrival times must show no request inside any pause.

Run: .venv/bin/python bench/bench_limiter_429.py   (exits non-zero only if broken)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from shared.config import build_settings  # noqa: E402
from shared.llm import LLMError, MemorySink, call_llm, configure_llm  # noqa: E402
from shared.llm.limiter import Budget, ClassLimits, LimiterConfig, NatsKvLimiter  # noqa: E402
from shared.runtime import EmbeddedNatsServer  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropic, rate_limited  # noqa: E402

PROCESSES = 4
LIMIT = 50  # requests per window, enforced by the fake
WINDOW_S = 6.0  # the scaled "minute"
LOAD = 3.0  # offered load, as a multiple of the limit
DURATION_S = 18.0  # three windows
# A sliding window counts arrivals, and arrivals jitter by milliseconds around the slots
# the limiter hands out; paced at exactly the window's rate, a saturated stream collides
# with the request 50 slots earlier about every other time. 2 % under the rate leaves
# ~120 ms of slack per window, far more than the jitter.
HEADROOM = 0.02
# A request already on the wire when a pause is announced may still arrive after it.
IN_FLIGHT_GRACE_S = 0.05
FAKE_KEY = "fake-bench-key-not-real"
INJECT_AT_S = DURATION_S / 2
INJECTED_RETRY_AFTER_S = 2


def limiter_config() -> LimiterConfig:
    """The fake's rate less HEADROOM; burst 1: a sliding window has no room for a burst."""
    huge = Budget(per_minute=1e12)
    requests = Budget(per_minute=LIMIT * 60 / WINDOW_S * (1 - HEADROOM), burst=1)
    limits = ClassLimits(requests=requests, input_tokens=huge, output_tokens=huge)
    return LimiterConfig(classes={"sonnet": limits})


class RecordingLimiter(NatsKvLimiter):
    """Notes every pause this process announces (wall time, until), for the check."""

    pauses: list[tuple[float, float]]

    async def pause(self, *, model: str, until: float) -> None:
        """Record, then announce."""
        self.pauses.append((time.time(), until))
        await super().pause(model=model, until=until)


async def worker(nats_url: str, fake_url: str, bucket: str) -> None:
    """Offer LOAD x the limit / PROCESSES through call_llm until DURATION_S has passed."""
    limiter = await RecordingLimiter.connect(nats_url, bucket=bucket, config=limiter_config())
    limiter.pauses = []
    if limiter.mode != "nats":
        raise SystemExit("worker could not reach NATS")
    settings = build_settings(
        anthropic_base_url=fake_url, anthropic_api_key=FAKE_KEY, llm="anthropic"
    )
    # Warm the HTTP connection first (the fake is not limiting yet; the limiter is not
    # involved): a cold first request arrives late and bunches with the next ones.
    warm = configure_llm(settings, sink=MemorySink())
    await call_llm(task="bench-warmup", tier="standard", user="ping", max_tokens=16)
    configure_llm(settings, sink=MemorySink(), limiter=limiter, provider=warm.provider)
    print("ready", flush=True)
    start = float(await asyncio.to_thread(sys.stdin.readline))
    await asyncio.sleep(max(0.0, start - time.time()))
    outcomes = {"ok": 0, "failed": 0}

    async def one() -> None:
        try:
            await call_llm(task="bench-429", tier="standard", user="ping", max_tokens=16)
            outcomes["ok"] += 1
        except LLMError:
            outcomes["failed"] += 1

    every = WINDOW_S / (LIMIT * LOAD / PROCESSES)
    tasks = []
    while time.time() < start + DURATION_S:
        tasks.append(asyncio.ensure_future(one()))
        await asyncio.sleep(every)
    for task in tasks:
        task.cancel()  # still queued in the limiter: the offered load exceeded the limit
    await asyncio.gather(*tasks, return_exceptions=True)
    await limiter.aclose()
    print(json.dumps({**outcomes, "offered": len(tasks), "pauses": limiter.pauses}), flush=True)


def run(nats_url: str, fake: FakeAnthropic) -> list[dict[str, object]]:
    """Spawn the workers, start them together, collect their reports."""
    bucket = f"bench429_{uuid.uuid4().hex[:8]}"
    cmd = [sys.executable, __file__, "--worker", nats_url, fake.url, bucket]
    procs = [
        subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        for _ in range(PROCESSES)
    ]
    try:
        for p in procs:
            assert p.stdout is not None
            if p.stdout.readline().strip() != "ready":
                raise SystemExit("a worker failed to start")
        fake.clear()  # forget the warm-up requests, then start enforcing
        fake.rate_limit(LIMIT, window_s=WINDOW_S, sliding=True)
        start = time.time() + 0.3
        inject = threading.Timer(
            start + INJECT_AT_S - time.time(),
            lambda: fake.enqueue(rate_limited(retry_after=INJECTED_RETRY_AFTER_S)),
        )
        inject.start()
        for p in procs:
            assert p.stdin is not None
            p.stdin.write(f"{start}\n")
            p.stdin.flush()
        reports = []
        for p in procs:
            out, _ = p.communicate(timeout=DURATION_S + 60)
            if p.returncode != 0:
                raise SystemExit(f"a worker exited with {p.returncode}")
            reports.append(json.loads(out.strip().splitlines()[-1]))
        return reports
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()


def merge(windows: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Union of overlapping (start, end) windows."""
    merged: list[tuple[float, float]] = []
    for start, end in sorted(windows):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def main() -> int:
    """Run the scenario and print the figures."""
    print(
        f"429 bench: fake enforces {LIMIT} requests per {WINDOW_S:g} s sliding window "
        f"(a minute scaled down 10x: {LIMIT * 60 / WINDOW_S:g} RPM); limiter configured "
        f"for that rate less {HEADROOM:.0%} headroom for send jitter (burst 1); "
        f"{PROCESSES} processes offer {LOAD:g}x for {DURATION_S:g} s through call_llm"
    )
    with (
        tempfile.TemporaryDirectory() as tmp,
        EmbeddedNatsServer(Path(tmp)) as server,
        FakeAnthropic() as fake,
    ):
        reports = run(server.url, fake)
        arrivals = [(r.wall, r.status) for r in fake.requests]
        injected = 1 - fake.pending
    sent = len(arrivals)
    limited = sum(1 for _, status in arrivals if status == 429) - injected
    pauses = [tuple(p) for r in reports for p in r["pauses"]]
    in_grace = violations = 0
    for wall, _ in arrivals:
        for announced, until in pauses:
            if announced + IN_FLIGHT_GRACE_S < wall < until:
                violations += 1
                break
            if announced < wall < until:
                in_grace += 1
                break
    offered = sum(r["offered"] for r in reports)
    ok = sum(r["ok"] for r in reports)
    share = 100.0 * limited / (sent - injected) if sent > injected else 0.0
    paused_s = sum(until - announced for announced, until in merge(pauses))
    ceiling = 1 + LIMIT * (1 - HEADROOM) / WINDOW_S * (DURATION_S - paused_s)
    print(
        f"offered {offered} calls; {sent} requests reached the fake; {ok} calls succeeded "
        f"(the limiter's ceiling: burst + rate x (time - {paused_s:.1f} s paused) = "
        f"{ceiling:.0f})"
    )
    print(
        f"429 answers from the rate-limit window: {limited} of {sent - injected} = "
        f"{share:.2f} % (goal < 1 %) {'OK' if share < 1 else 'MISS'}"
    )
    print(f"scripted 429 (retry-after {INJECTED_RETRY_AFTER_S} s) answered: {injected}")
    print(
        f"pauses announced: {len(pauses)}; requests arriving inside an announced pause: "
        f"{violations} (goal 0) {'OK' if violations == 0 else 'MISS'}; within "
        f"{IN_FLIGHT_GRACE_S * 1000:.0f} ms of the announcement (already in flight): {in_grace}"
    )
    if sent == 0 or ok == 0:
        print("broken run: no request succeeded")
        return 1
    if injected and not pauses:
        print("broken run: the scripted 429 announced no pause")
        return 1
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", nargs=3, metavar=("NATS_URL", "FAKE_URL", "BUCKET"))
    args = parser.parse_args()
    if args.worker:
        asyncio.run(worker(*args.worker))
        sys.exit(0)
    sys.exit(main())
