"""Extractor pacing under a request quota: a 60-chunk source at 60 RPM, and no 429s.

The fake Anthropic server enforces its quota as a sliding window of 12 requests per 12 s
(60 RPM, enforced over a fifth of a minute: a burst of 13 in any 12 s is refused). The
extractor service runs on a real nats-server with the shared NATS KV limiter configured
for that 60 RPM quota: burst one, and the 2 % headroom bench_limiter_429 uses (a sliding
window counts arrivals, which jitter by milliseconds around the limiter's slots; paced at
exactly the window's rate, a request now and then lands a few ms early and draws a 429).
Token budgets are set high: the fake enforces requests only. A 60-chunk source makes 60
requests. Quota math, stated honestly:

- the quota sustains N / rate = 60 s for 60 requests: the goal is ≤ 1.05× that (the
  headroom alone costs 2 %);
- the fake's window would admit the 60 requests in 48 s (12 at once, 12 more every 12 s),
  but only by bursting 12 at a time, which a minute-based rate with a burst of one never
  does: that ratio is printed as well;
- any burst above one at 60 RPM would draw 429s from a 12-s window (13 requests in
  [0, 12)), which is why the burst is one.

    python bench/bench_extractor_quota.py [--chunks 60]

Takes about a minute. Exits non-zero only when the run is broken.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import logging
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nats  # noqa: E402

from services.extractor.app import build, deps_of  # noqa: E402
from services.extractor.config import ExtractorSettings  # noqa: E402
from services.extractor.offline import derive_graph  # noqa: E402
from services.extractor.prompts import split_document_message  # noqa: E402
from services.extractor.uploads import register_upload  # noqa: E402
from shared.bus import publish_event  # noqa: E402
from shared.config import build_settings  # noqa: E402
from shared.llm import LimiterConfig, call_llm, open_limiter  # noqa: E402
from shared.llm.limiter import Budget, ClassLimits  # noqa: E402
from shared.runtime import EmbeddedNatsServer  # noqa: E402
from shared.runtime.service import start_service, stop_service  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropic, Reply, tool_reply  # noqa: E402

RPM = 60
HEADROOM = 0.02
WINDOW_S, WINDOW_REQUESTS = 12.0, 12
GOAL = 1.05
API_KEY = "fake-bench-key-not-real"
CHUNK_CHARS = 400


def document(chunks: int) -> str:
    body = "Dit is een zin over het onderwerp met genoeg woorden om de sectie te vullen. " * 3
    return "\n\n".join(f"## Onderwerp {i}\n{body.strip()}" for i in range(chunks)) + "\n"


def respond(body: Any) -> Reply:
    content = body["messages"][-1]["content"]
    parsed = split_document_message(content if isinstance(content, str) else "")
    if parsed is None:
        return tool_reply("emit_knowledge_graph", {"topics": [], "relations": []})
    name, text, known = parsed
    return tool_reply("emit_knowledge_graph", derive_graph(text, name=name, known_ids=known))


def limiter_config() -> LimiterConfig:
    huge = Budget(per_minute=100_000_000)
    sonnet = ClassLimits(requests=Budget(per_minute=RPM * (1 - HEADROOM), burst=1),
                         input_tokens=huge,
                         output_tokens=huge)  # fmt: skip
    return LimiterConfig(classes={"sonnet": sonnet})


async def run(chunks: int) -> None:
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic() as fake:
        data = Path(tmp)
        server = EmbeddedNatsServer(data / "nats").start()
        settings = build_settings(nats_url=server.url, store=f"sqlite:///{data / 'kb.db'}",
                                  llm="anthropic", anthropic_base_url=fake.url,
                                  anthropic_api_key=API_KEY, limiter="off")  # fmt: skip
        ext = ExtractorSettings(sample_handbook=False, max_chunk_chars=CHUNK_CHARS,
                                overlap_chars=0)  # fmt: skip
        ctx = await start_service("extractor", build=partial(build, extractor=ext),
                                  settings=settings, namespace="quota")  # fmt: skip
        limiter = await open_limiter(mode="nats", nats_url=server.url, config=limiter_config(),
                                     bucket="bench_quota")  # fmt: skip
        deps_of(ctx).limiter = limiter
        nc = await nats.connect(server.url)
        done = asyncio.Event()
        try:
            await call_llm(task="warmup", user="hello")  # opens the HTTP connection first
            fake.clear()
            fake.rate_limit(WINDOW_REQUESTS, window_s=WINDOW_S, sliding=True)
            fake.default = respond

            async def on_done(msg: Any) -> None:
                done.set()

            await nc.subscribe("quota.source.completed", cb=on_done)
            await nc.subscribe("quota.source.failed", cb=on_done)
            reg = await register_upload(ctx.store, name="quota.md", text=document(chunks),
                                        uploaded_by="bench", actor="bench")  # fmt: skip
            assert reg.event is not None and reg.source is not None
            started = time.monotonic()
            await publish_event(ctx.broker, reg.event, namespace="quota")
            await asyncio.wait_for(done.wait(), 300)
            elapsed = time.monotonic() - started
            source = await ctx.store.sources.get(reg.source.id)
        finally:
            await nc.close()
            logging.getLogger("faststream.access.nats").setLevel(logging.WARNING)
            await stop_service(ctx)
            await limiter.aclose()  # type: ignore[attr-defined]
            server.stop()
        requests = fake.requests
    if source is None or source.status != "completed" or source.chunks_done != chunks:
        raise SystemExit(f"broken run: the source ended as {source}")
    refused = sum(1 for r in requests if r.status == 429)
    steady = chunks / (RPM / 60.0)
    windows = max(0, (chunks - 1) // WINDOW_REQUESTS)
    bursty = windows * WINDOW_S
    arrivals = [r.monotonic for r in requests if r.status == 200]
    gaps = sorted(b - a for a, b in itertools.pairwise(arrivals))
    print(f"quota: the fake admits {WINDOW_REQUESTS} requests per sliding {WINDOW_S:g} s window "
          f"(= {RPM} RPM); limiter: NATS KV, {RPM} RPM less {HEADROOM:.0%} headroom "
          f"= {RPM * (1 - HEADROOM):g} RPM, burst 1")  # fmt: skip
    print(f"source: {chunks} chunks → {len(requests)} requests ({refused} answered 429)")
    print(f"  elapsed {elapsed:6.1f} s   steady-rate bound N/rate = {steady:.0f} s   "
          f"ratio {elapsed / steady:.3f} (goal ≤ {GOAL})")  # fmt: skip
    print(f"  the window would allow {bursty:.0f} s by bursting {WINDOW_REQUESTS} at a time: "
          f"ratio {elapsed / bursty:.2f} (even pacing, not bursts)")  # fmt: skip
    if gaps:
        print(f"  gaps between admitted requests: min {gaps[0]:.3f} s, "
              f"median {gaps[len(gaps) // 2]:.3f} s, max {gaps[-1]:.3f} s")  # fmt: skip
    ok = refused == 0 and elapsed <= GOAL * steady
    print("  verdict:", "meets the goal (no 429s, within 1.05×)" if ok else "MISSES the goal")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--chunks", type=int, default=60)
    args = parser.parse_args()
    asyncio.run(run(args.chunks))
