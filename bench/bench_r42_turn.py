"""A full R42 chat turn over rpc.r42.chat with the offline provider, at 1,000 topics.

Run: python bench/bench_r42_turn.py [--turns 300]
Starts an embedded nats-server and the r42 service in-process on a temp SQLite store with
1,000 synthetic topics (relations, some generated content), then sends sequential chat
turns from a client broker. Baseline in the same run: an rpc echo round trip on the same
bus (shared.bus serve_rpc / request), so the figures say what a turn costs above the bus.
A turn here is: quiz check, thread read, KB context (retrieval + content excerpts), one to
three offline model calls (the lookup loop), sources, thread write. Exits non-zero only
when the run is broken (an error reply), never because it is slow.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pydantic import BaseModel  # noqa: E402

from services.r42 import app as r42_app  # noqa: E402
from shared.bus import (  # noqa: E402
    CHAT_SUBJECT,
    ChatReply,
    ChatRequest,
    build_broker,
    request,
    serve_rpc,
    start_broker,
)
from shared.config import build_settings  # noqa: E402
from shared.runtime import EmbeddedNatsServer  # noqa: E402
from shared.runtime.service import start_service, stop_service  # noqa: E402
from shared.store import Content, Relation, Topic, open_store  # noqa: E402

N_TOPICS = 1_000
SEED = 42
WORDS = """verlof pensioen declaratie laptop sprint review backlog klant budget opleiding
reiskosten thuiswerken beveiliging incident rooster salaris contract project team kantoor
fiets lunch borrel verzekering partner bonus factuur overleg gesprek groei mentor buddy
wachtwoord privacy audit risico kwaliteit klacht proces rol beleid regeling aanvraag""".split()


class Echo(BaseModel):
    """The baseline's request and reply."""

    text: str


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of values, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def seed(url: str, rng: random.Random) -> list[str]:
    """1,000 topics, ~1,500 relations, content for 50 topics; returns questions to ask."""
    store = await open_store(url)
    topics = []
    for i in range(N_TOPICS):
        label = " ".join(rng.sample(WORDS, 2)).capitalize() + f" {i}"
        description = " ".join(rng.choices(WORDS, k=40)) + "."
        topics.append(Topic(id=f"onderwerp-{i}", label=label, type=rng.choice(
            ("concept", "role", "process")), description=description))  # fmt: skip
    await store.topics.upsert_many(topics)
    relations = {
        (f"onderwerp-{a}", f"onderwerp-{b}")
        for a, b in ((rng.randrange(N_TOPICS), rng.randrange(N_TOPICS)) for _ in range(1500))
        if a != b
    }
    await store.relations.upsert_many(
        Relation(source=s, target=t, type="related_to") for s, t in sorted(relations)
    )
    for i in range(0, N_TOPICS, 20):
        article = {"title": topics[i].label, "body": " ".join(rng.choices(WORDS, k=200))}
        await store.content.put(Content(topic_id=topics[i].id, article=article))
    await store.close()
    # Half name a topic (→ a lookup), half are free questions (→ context only).
    named = [f"Wat is {t.label.lower()}?" for t in rng.sample(topics, 50)]
    free = [f"Hoe werkt {' '.join(rng.sample(WORDS, 3))}?" for _ in range(50)]
    return named + free


async def run(turns: int) -> int:
    """Measure and print; returns the process exit code."""
    rng = random.Random(SEED)
    with tempfile.TemporaryDirectory(prefix="bench-r42-") as tmp:
        server = EmbeddedNatsServer(Path(tmp) / "nats").start()
        ctx = client = None
        try:
            url = f"sqlite:///{Path(tmp) / 'r42.db'}"
            questions = await seed(url, rng)
            settings = build_settings(nats_url=server.url, store=url, llm="offline",
                                      limiter="off", data_dir=Path(tmp))  # fmt: skip
            ctx = await start_service("r42", build=r42_app.build, settings=settings)
            client = build_broker(server.url, name="bench-r42-client")
            await start_broker(client)

            async def echo(req: Echo) -> Echo:
                return req

            await serve_rpc(client, "rpc.bench.echo", request_model=Echo, handler=echo)

            started = time.perf_counter()
            first = await request(client, CHAT_SUBJECT, ChatRequest(user_id="warm", text="hoi"),
                                  response_model=ChatReply, timeout=60)  # fmt: skip
            cold_ms = (time.perf_counter() - started) * 1000
            baseline: list[float] = []
            for i in range(500):
                t0 = time.perf_counter()
                await request(client, "rpc.bench.echo", Echo(text=f"x{i}"), response_model=Echo)
                baseline.append((time.perf_counter() - t0) * 1000)
            samples: list[float] = []
            errors = 0
            for i in range(turns):
                req = ChatRequest(user_id=f"U{i % 40}", text=questions[i % len(questions)])
                t0 = time.perf_counter()
                reply = await request(client, CHAT_SUBJECT, req, response_model=ChatReply,
                                      timeout=60)  # fmt: skip
                samples.append((time.perf_counter() - t0) * 1000)
                errors += reply.error_ref is not None or not reply.offline
        finally:
            if client is not None:
                await client.stop()
            if ctx is not None:
                await stop_service(ctx)
            server.stop()
    p50, p95 = statistics.median(samples), pct(samples, 0.95)
    b50, b95 = statistics.median(baseline), pct(baseline, 0.95)
    print(f"r42 turn over rpc, offline provider, {N_TOPICS} topics, {turns} turns")
    print(f"  first turn (builds the KB snapshot): {cold_ms:8.1f} ms  ({first.text[:40]!r})")
    print(f"  turn            p50 {p50:8.2f} ms   p95 {p95:8.2f} ms")
    print(f"  rpc echo (base) p50 {b50:8.2f} ms   p95 {b95:8.2f} ms")
    print(f"  turn / echo     p50 {p50 / b50:8.1f}x   p95 {p95 / b95:8.1f}x")
    if errors:
        print(f"BROKEN: {errors} turn(s) failed or were not offline", file=sys.stderr)
        return 1
    return 0


def main() -> int:
    """Parse arguments and run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=300)
    args = parser.parse_args()
    if args.turns < 1:
        parser.error("--turns must be >= 1")
    return asyncio.run(run(args.turns))


if __name__ == "__main__":
    sys.exit(main())
