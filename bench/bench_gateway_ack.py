"""Slack ack latency: 100 concurrent signed HTTP requests while the model is slow.

Starts an embedded nats-server, a temp SQLite store, the fake Slack Web API, a fake
Anthropic API whose every reply takes 10 s, the real content, r42 and quiz services and the
gateway in HTTP mode. Phase 1 (baseline): 100 concurrent signed `/r42 help` (no model
involved). Phase 2: one `/learn` and one DM first, so the model is busy, then 100 concurrent
signed Events API callbacks (a DM question each, from 100 users: every one starts an R42
chat turn on the 10-second model). Phase 3: 100 concurrent signed `/learn` (each makes the
content service call the model). Prints p50 / p99 of the time to the HTTP ack per phase and
the ratio to the baseline (goal: p99 ≤ 100 ms for the events; Slack gives up after 3 s).

    python bench/bench_gateway_ack.py [--concurrency 100] [--model-delay 10]

Exits non-zero only when the run is broken (a request is not acked with 200, or the slow
work had already finished when the acks came back, which would mean nothing was measured).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from urllib.parse import urlencode

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from services.content import app as content_app  # noqa: E402
from services.gateway.app import build as gateway_build  # noqa: E402
from services.gateway.slack.service import Mode  # noqa: E402
from services.quiz import app as quiz_app  # noqa: E402
from services.r42 import app as r42_app  # noqa: E402
from shared.config import build_settings  # noqa: E402
from shared.runtime import EmbeddedNatsServer  # noqa: E402
from shared.runtime.service import start_service, stop_service  # noqa: E402
from shared.store import Topic, open_store  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropic, slow, text_reply  # noqa: E402
from tests.fakes.slack_server import FakeSlack  # noqa: E402
from tests.services.gateway.harness import sign  # noqa: E402

SECRET = "bench-signing-secret"
GOAL_P99_S = 0.1


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of values."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


async def fire(
    http: aiohttp.ClientSession, url: str, command: str, text: str, user: str, respond_url: str
) -> float:
    """One signed slash command; seconds until the HTTP ack (raises on a non-200)."""
    body = urlencode(
        {
            "command": command,
            "text": text,
            "user_id": user,
            "channel_id": "C1",
            "team_id": "T1",
            "trigger_id": "t",
            "response_url": respond_url,
        }
    )
    headers = {"Content-Type": "application/x-www-form-urlencoded", **sign(body, secret=SECRET)}
    started = time.perf_counter()
    async with http.post(url, data=body.encode(), headers=headers) as resp:
        await resp.read()
        elapsed = time.perf_counter() - started
        if resp.status != 200:
            raise RuntimeError(f"{command} answered {resp.status}")
    return elapsed


async def event(http: aiohttp.ClientSession, url: str, n: int) -> float:
    """One signed Events API callback (a DM question); seconds until the HTTP ack."""
    user = f"UEVENT{n:03d}"
    question = {"type": "message", "channel_type": "im", "channel": f"D{user[1:]}", "user": user,
                "text": "Hoe vraag ik verlof aan?", "ts": f"1700000{n:03d}.000100",
                "client_msg_id": f"cm-bench-{n}"}  # fmt: skip
    body = json.dumps(
        {"type": "event_callback", "team_id": "T1", "api_app_id": "A1",
         "event_id": f"EvBench{n}", "event_time": int(time.time()), "event": question}
    )  # fmt: skip
    headers = {"Content-Type": "application/json", **sign(body, secret=SECRET)}
    started = time.perf_counter()
    async with http.post(url, data=body.encode(), headers=headers) as resp:
        await resp.read()
        elapsed = time.perf_counter() - started
        if resp.status != 200:
            raise RuntimeError(f"event {n} answered {resp.status}")
    return elapsed


async def burst(
    http: aiohttp.ClientSession, url: str, command: str, text: str, n: int, respond_url: str
) -> list[float]:
    """n concurrent commands from n users."""
    return list(
        await asyncio.gather(
            *(fire(http, url, command, text, f"UBENCH{i:03d}", respond_url) for i in range(n))
        )
    )


async def main(concurrency: int, model_delay: float) -> int:
    logging.basicConfig(level=logging.WARNING)
    logging.disable(logging.WARNING)  # FastStream's per-message lines would bury the figures
    with tempfile.TemporaryDirectory() as tmp, FakeSlack() as slack, FakeAnthropic() as model:
        model.default = lambda _req: slow(text_reply("te laat"), model_delay)
        nats_server = EmbeddedNatsServer(Path(tmp) / "nats").start()
        settings = build_settings(
            nats_url=nats_server.url,
            store=f"sqlite:///{tmp}/r42.db",
            data_dir=Path(tmp),
            llm="anthropic",
            anthropic_api_key="sk-bench",
            anthropic_base_url=model.url,
            limiter="off",
            slack_bot_token="xoxb-bench",
            slack_signing_secret=SECRET,
            slack_api_base_url=slack.base_url,
            llm_timeout_s=model_delay + 30,
        )
        store = await open_store(settings.store_url)
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
        mode = Mode("http", host="127.0.0.1", port=0)
        content = await start_service(
            "content",
            build=content_app.build,
            settings=settings,
        )
        r42 = await start_service("r42", build=r42_app.build, settings=settings)
        quiz = await start_service("quiz", build=quiz_app.build, settings=settings)
        gateway = await start_service(
            "gateway",
            build=partial(gateway_build, mode=mode),
            settings=settings,
        )
        assert gateway.spec is not None  # start_service always builds one
        url = f"http://127.0.0.1:{gateway.spec.deps.runtime.port}/slack/events"
        respond_url = slack.response_url("bench")
        try:
            async with aiohttp.ClientSession() as http:
                await burst(http, url, "/r42", "help", 2, respond_url)  # warm-up
                baseline = await burst(http, url, "/r42", "help", concurrency, respond_url)
                await fire(http, url, "/learn", "", "UWARM", respond_url)
                deadline = time.monotonic() + 30
                # The fake records from its own thread: polling is the simple bridge.
                while not model.requests and time.monotonic() < deadline:  # noqa: ASYNC110
                    await asyncio.sleep(0.05)
                if not model.requests:
                    print("broken run: the model was never called", file=sys.stderr)
                    return 1
                await event(http, url, 999)
                busy_since = time.monotonic()
                events = list(
                    await asyncio.gather(*(event(http, url, n) for n in range(concurrency)))
                )
                loaded = await burst(http, url, "/learn", "", concurrency, respond_url)
                acked_after = time.monotonic() - busy_since
                # Every DM started a turn: the model saw (nearly) all of them while slow.
                while len(model.requests) < concurrency // 2 and time.monotonic() < deadline:  # noqa: ASYNC110
                    await asyncio.sleep(0.05)
                turns_started = len(model.requests)
        finally:
            await stop_service(gateway)
            await stop_service(quiz)
            await stop_service(r42)
            await stop_service(content)
            nats_server.stop()
        done = [c for c in slack.calls_to("chat.update") if "Verlof" in json.dumps(c.args)]
        if acked_after >= model_delay or done:
            print("broken run: the slow work finished before the acks came back", file=sys.stderr)
            return 1
    p50_b, p99_b = statistics.median(baseline), pct(baseline, 99)
    p50_l, p99_l = statistics.median(loaded), pct(loaded, 99)
    p50_e, p99_e = statistics.median(events), pct(events, 99)
    print(
        f"ack latency, {concurrency} concurrent signed HTTP requests "
        f"(model replies after {model_delay:g} s; {turns_started} model calls in flight)"
    )
    print(f"  baseline /r42 help        p50 {p50_b * 1000:7.1f} ms   p99 {p99_b * 1000:7.1f} ms")
    print(f"  DM events, model busy     p50 {p50_e * 1000:7.1f} ms   p99 {p99_e * 1000:7.1f} ms")
    print(f"  /learn, model busy        p50 {p50_l * 1000:7.1f} ms   p99 {p99_l * 1000:7.1f} ms")
    print(f"  events / baseline         p50 {p50_e / p50_b:7.2f}×     p99 {p99_e / p99_b:7.2f}×")
    print(f"  /learn / baseline         p50 {p50_l / p50_b:7.2f}×     p99 {p99_l / p99_b:7.2f}×")
    verdict = "met" if p99_e <= GOAL_P99_S else "MISSED"
    print(
        f"  goal event ack p99 ≤ {GOAL_P99_S * 1000:g} ms under load: {verdict}; all acks came "
        f"{acked_after:.2f} s into the model's {model_delay:g} s"
    )
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--model-delay", type=float, default=10.0)
    args = parser.parse_args()
    sys.exit(asyncio.run(main(args.concurrency, args.model_delay)))
