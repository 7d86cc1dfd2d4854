"""Slack ack latency: 100 concurrent signed HTTP requests while the model is slow.

Starts an embedded nats-server, a temp SQLite store, the fake Slack Web API and a fake
Anthropic API whose every reply takes 10 s (both in this process), and as child processes
(as `r42 up` runs them) the real content, r42 and quiz services and the gateway in HTTP mode.
Baseline, in the same run: a bare aiohttp endpoint (its own process) that only verifies the
signature and answers 200, hit by the same 100 concurrent signed events. Then against the
gateway: 100 concurrent `/r42 help` (no model); one `/learn` and one DM so the model is busy;
100 concurrent Events API callbacks (a DM question each, from 100 users: every one starts an
R42 chat turn on the 10-second model); 100 concurrent `/learn` (each makes the content service
call the model). Prints p50 / p99 of the time to the HTTP ack per phase, the ratios to the
bare baseline and the load average (goal: event ack p99 ≤ 100 ms; Slack gives up after 3 s).

    python bench/bench_gateway_ack.py [--concurrency 100] [--model-delay 10]

Exits non-zero only when the run is broken (a request not acked with 200, or the slow work
had already finished when the acks came back, which would mean nothing was measured).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._gateway_bench import (  # noqa: E402
    Processes,
    SignedSlack,
    dm_event,
    load,
    pct,
    stack_env,
    wait_ready,
)
from shared.runtime import EmbeddedNatsServer  # noqa: E402
from shared.runtime.nats_server import free_port  # noqa: E402
from shared.store import Topic, open_store  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropic, slow, text_reply  # noqa: E402
from tests.fakes.slack_server import FakeSlack  # noqa: E402

GOAL_P99_S = 0.1


async def wait_model_calls(model: FakeAnthropic, count: int, deadline: float) -> int:
    """Wait until the fake model saw `count` requests (or the deadline); how many it saw."""
    # The fake records from its own thread: polling is the simple bridge.
    while len(model.requests) < count and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    return len(model.requests)


def line(name: str, values: list[float], base: list[float]) -> str:
    """One printed row: p50 / p99 and the ratio to the bare baseline."""
    p50, p99 = statistics.median(values), pct(values, 99)
    r50, r99 = p50 / statistics.median(base), p99 / pct(base, 99)
    return (
        f"  {name:<28} p50 {p50 * 1000:7.1f} ms   p99 {p99 * 1000:7.1f} ms   "
        f"({r50:5.1f}× / {r99:5.1f}× bare)"
    )


async def main(concurrency: int, model_delay: float) -> int:
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp, FakeSlack() as slack, FakeAnthropic() as model:
        model.default = lambda _req: slow(text_reply("te laat"), model_delay)
        data = Path(tmp)
        nats_server = EmbeddedNatsServer(data / "nats").start()
        env = stack_env(
            nats_url=nats_server.url,
            data_dir=data,
            model_url=model.url,
            slack_url=slack.base_url,
            R42_LLM_TIMEOUT_S=str(model_delay + 30),
        )
        store = await open_store(f"sqlite:///{data}/r42.db")
        await store.topics.upsert_many(
            [
                Topic(
                    id="verlof",
                    label="Verlof",
                    type="process",
                    description="Verlof vraag je aan in het portaal.",
                )
            ]
        )
        await store.close()
        bare_port, port = free_port(), free_port()
        readiness = {name: free_port() for name in ("content", "r42", "quiz")}
        respond_url = slack.response_url("bench")
        with Processes(data) as procs:
            procs.start("bare", ["bench/_gateway_bench.py", "bare", "--port", str(bare_port)], env)
            for name, metrics in readiness.items():
                procs.service(name, {**env, "R42_METRICS_PORT": str(metrics)})
            procs.service("gateway", env, "--http", "--host", "127.0.0.1", "--port", str(port))
            try:
                await wait_ready(f"http://127.0.0.1:{bare_port}/healthz", procs)
                for name, metrics in readiness.items():
                    try:
                        await wait_ready(f"http://127.0.0.1:{metrics}/readyz", procs)
                    except RuntimeError as exc:
                        raise RuntimeError(f"{name}: {exc}") from None
                await wait_ready(f"http://127.0.0.1:{port}/healthz", procs)
                async with aiohttp.ClientSession() as http:
                    bare = SignedSlack(http, f"http://127.0.0.1:{bare_port}/slack/events")
                    gateway = SignedSlack(http, f"http://127.0.0.1:{port}/slack/events")
                    dms = [dm_event(n) for n in range(concurrency)]
                    # Full warm-up bursts: every phase then runs on open keep-alive connections.
                    await bare.events(dms, prefix="warm")
                    baseline = await bare.events(dms, prefix="bare")
                    await gateway.commands("/r42", "help", concurrency, response_url=respond_url)
                    helps = await gateway.commands(
                        "/r42", "help", concurrency, response_url=respond_url, first=100
                    )
                    await gateway.command("/learn", "", user="UWARM", response_url=respond_url)
                    deadline = time.monotonic() + 30
                    if not await wait_model_calls(model, 1, deadline):
                        print("broken run: the model was never called", file=sys.stderr)
                        return 1
                    await gateway.event(dm_event(99_999), event_id="EvWarm")
                    busy_since = time.monotonic()
                    events = await gateway.events(dms, prefix="dm")
                    learns = await gateway.commands(
                        "/learn", "", concurrency, response_url=respond_url, first=1000
                    )
                    acked_after = time.monotonic() - busy_since
                    answered = [
                        c for c in slack.calls_to("chat.update") if "te laat" in str(c.args)
                    ]
                    # Every DM started a turn: the model saw (nearly) all of them while slow.
                    turns_started = await wait_model_calls(model, concurrency // 2, deadline)
                    measured_at = load()
            finally:
                procs.check()
        nats_server.stop()
        if acked_after >= model_delay or answered:
            print("broken run: the slow work finished before the acks came back", file=sys.stderr)
            return 1
    print(
        f"ack latency, {concurrency} concurrent signed HTTP requests "
        f"(model replies after {model_delay:g} s; {turns_started} model calls in flight)"
    )
    print(line("bare signature-check baseline", baseline, baseline))
    print(line("/r42 help (no model)", helps, baseline))
    print(line("DM events, model busy", events, baseline))
    print(line("/learn, model busy", learns, baseline))
    verdict = "met" if pct(events, 99) <= GOAL_P99_S else "MISSED"
    print(
        f"  goal event ack p99 ≤ {GOAL_P99_S * 1000:g} ms under load: {verdict}; all acks came "
        f"{acked_after:.2f} s into the model's {model_delay:g} s; {measured_at}"
    )
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--model-delay", type=float, default=10.0)
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.concurrency, args.model_delay)))
