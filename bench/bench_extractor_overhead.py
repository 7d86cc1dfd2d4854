"""Extractor pipeline overhead: chunks per second through event → LLM call → merge.

The LLM answers instantly (a provider stub behind the real `call_llm`: validation,
telemetry; limiter off), so what is measured is our own machinery: the extractor service
on a real nats-server (JetStream source.uploaded → LLM step → chunk.extracted → merge
consumer → source.progress / source.completed) with a SQLite store. The same source also
runs through the bus-free pipeline (`ingest_locally`, what `r42 ingest` does without a
stack) as the baseline measured in the same run. Each stage's time is summed:

- llm: inside call_llm (request building, the stub, tool-input validation, telemetry)
- publish: our JetStream publishes (waiting for the stream's ack)
- store: every SQLite read and write (its worker thread, awaited)
- plan: merge planning (shared.kb.plan_merge)
The LLM step and the merge step run concurrently, so stage totals can exceed wall time.

    python bench/bench_extractor_overhead.py [--chunks 200] [--runs 3]

Goal: ≥ 100 chunks/s on the bus. Exits non-zero only when a run is broken.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nats  # noqa: E402

import services.extractor.merge as merge_module  # noqa: E402
import services.extractor.pipeline as pipeline_module  # noqa: E402
from services.extractor.app import build, deps_of  # noqa: E402
from services.extractor.config import ExtractOptions, ExtractorSettings  # noqa: E402
from services.extractor.local import ingest_locally  # noqa: E402
from services.extractor.prompts import split_document_message  # noqa: E402
from services.extractor.uploads import register_upload  # noqa: E402
from shared.bus import parse_event, publish_event  # noqa: E402
from shared.config import build_settings  # noqa: E402
from shared.llm import MemorySink, ProviderReply, Usage, configure_llm, get_runtime  # noqa: E402
from shared.runtime import EmbeddedNatsServer  # noqa: E402
from shared.runtime.service import start_service, stop_service  # noqa: E402
from shared.store import open_store  # noqa: E402
from shared.store.sqlite.db import SqliteDb  # noqa: E402

GOAL = 100.0
CHUNK_CHARS = 400
TIMES: dict[str, float] = defaultdict(float)


class InstantProvider:
    """Answers emit_knowledge_graph at once: two topics and a relation per chunk."""

    name = "bench-stub"
    rate_limited = False

    async def create(self, request: Any) -> ProviderReply:
        """A tool_use reply derived from the chunk's heading."""
        message = request.params["messages"][-1]["content"]
        parsed = split_document_message(message)
        heading = parsed[1].split("\n", 1)[0].removeprefix("## ") if parsed else "x"
        slug = heading.lower().replace(" ", "-")
        tool_input = {
            "topics": [
                {"id": slug, "label": heading, "type": "concept", "description": "Een onderwerp."},
                {"id": f"{slug}-rol", "label": f"{heading} rol", "type": "role"},
            ],
            "relations": [{"source": slug, "target": f"{slug}-rol", "type": "executed_by"}],
        }
        block = {"type": "tool_use", "id": "toolu_bench", "name": "emit_knowledge_graph",
                 "input": tool_input}  # fmt: skip
        return ProviderReply(content=[block], stop_reason="tool_use", usage=Usage(),
                             model="claude-sonnet-4-6")  # fmt: skip

    async def aclose(self) -> None:
        """Nothing to release."""


def document(chunks: int, run: int) -> str:
    body = "Dit is een zin over het onderwerp met genoeg woorden om de sectie te vullen. " * 3
    return "\n\n".join(f"## Onderwerp {run} {i}\n{body.strip()}" for i in range(chunks)) + "\n"


def timed(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    if asyncio.iscoroutinefunction(fn):

        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                TIMES[name] += time.perf_counter() - started

        return async_wrapper

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            TIMES[name] += time.perf_counter() - started

    return wrapper


def instrument() -> None:
    pipeline_module.call_llm = timed("llm", pipeline_module.call_llm)
    merge_module.plan_merge = timed("plan", merge_module.plan_merge)
    SqliteDb.read = timed("store", SqliteDb.read)  # type: ignore[method-assign]
    SqliteDb.write = timed("store", SqliteDb.write)  # type: ignore[method-assign]


async def bus_run(url: str, data: Path, chunks: int, run: int) -> tuple[float, dict[str, float]]:
    settings = build_settings(nats_url=url, store=f"sqlite:///{data / f'bus{run}.db'}",
                              llm="offline", limiter="off")  # fmt: skip
    ext = ExtractorSettings(sample_handbook=False, max_chunk_chars=CHUNK_CHARS, overlap_chars=0)
    ns = f"bench{run}"
    ctx = await start_service("extractor", build=partial(build, extractor=ext),
                              settings=settings, namespace=ns)  # fmt: skip
    get_runtime().provider = InstantProvider()  # the real call_llm, an instant model
    deps = deps_of(ctx)
    deps.publish = timed("publish", deps.publish)
    done = asyncio.Event()
    nc = await nats.connect(url)

    async def on_done(msg: Any) -> None:
        parse_event(msg.subject, msg.data, namespace=ns)
        done.set()

    await nc.subscribe(f"{ns}.source.completed", cb=on_done)
    try:
        reg = await register_upload(ctx.store, name=f"bench-{run}.md", text=document(chunks, run),
                                    uploaded_by="bench", actor="bench")  # fmt: skip
        assert reg.event is not None and reg.source is not None
        TIMES.clear()
        started = time.perf_counter()
        await publish_event(ctx.broker, reg.event, namespace=ns)
        await asyncio.wait_for(done.wait(), 120)
        wall = time.perf_counter() - started
        source = await ctx.store.sources.get(reg.source.id)
        if source is None or source.status != "completed" or source.chunks_done != chunks:
            raise SystemExit(f"broken run: source ended as {source}")
        return wall, dict(TIMES)
    finally:
        await nc.close()
        # FastStream logs a line per subscriber task at shutdown; the figures are the output.
        logging.getLogger("faststream.access.nats").setLevel(logging.WARNING)
        await stop_service(ctx)


async def local_run(data: Path, chunks: int, run: int) -> float:
    configure_llm(build_settings(llm="offline"), sink=MemorySink(), provider=InstantProvider())
    store = await open_store(f"sqlite:///{data / f'local{run}.db'}")
    try:
        reg = await register_upload(store, name="local.md", text=document(chunks, run),
                                    uploaded_by="bench", actor="bench")  # fmt: skip
        assert reg.source is not None
        started = time.perf_counter()
        results = await ingest_locally(
            store=store, source_ids=[reg.source.id], limiter=None,
            options=ExtractOptions(max_chunk_chars=CHUNK_CHARS, overlap_chars=0),
        )  # fmt: skip
        wall = time.perf_counter() - started
        if results[reg.source.id].status != "completed":
            raise SystemExit(f"broken local run: {results}")
        return wall
    finally:
        await store.close()


async def main(chunks: int, runs: int) -> None:
    instrument()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        server = EmbeddedNatsServer(data / "nats").start()
        try:
            walls, stages, local = [], [], []
            for run in range(runs):
                wall, stage = await bus_run(server.url, data, chunks, run)
                walls.append(wall)
                stages.append(stage)
                local.append(await local_run(data, chunks, run))
        finally:
            server.stop()
    bus_wall, local_wall = statistics.median(walls), statistics.median(local)
    bus_rate, local_rate = chunks / bus_wall, chunks / local_wall
    print(f"extractor pipeline, {chunks} chunks per source, {runs} runs (medians)")
    print(f"  on the bus (JetStream + SQLite): {bus_rate:7.1f} chunks/s "
          f"({bus_wall / chunks * 1000:.2f} ms/chunk)  goal >= {GOAL:.0f}")  # fmt: skip
    print(f"  in-process baseline (no bus):    {local_rate:7.1f} chunks/s "
          f"({local_wall / chunks * 1000:.2f} ms/chunk)")  # fmt: skip
    print(f"  bus / baseline throughput:       {bus_rate / local_rate:7.2f}x")
    print("  stage time per chunk on the bus (summed over both steps; they overlap):")
    for name in ("llm", "publish", "store", "plan"):
        per_chunk = statistics.median(s.get(name, 0.0) for s in stages) / chunks * 1000
        print(f"    {name:<8} {per_chunk:6.2f} ms")
    print("  verdict:", "meets the goal" if bus_rate >= GOAL else "BELOW the goal")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.chunks, args.runs))
