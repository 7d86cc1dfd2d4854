"""Per-call overhead of `call_llm` vs a bare `AsyncAnthropic.messages.create`, same run.

The fake Anthropic server runs in a child process (so its work does not share our GIL);
both paths use the real SDK over loopback HTTP. Two workloads: a plain text reply, and a
forced tool call whose input `call_llm` validates against a pydantic model. Calls
alternate in blocks so drift hits both paths alike; prints medians, p90 and the median
ratio (goal: call_llm ≤ 1.10× bare).

    python bench/bench_llm_overhead.py [--calls 500] [--block 25]

Exits non-zero only when the run is broken (server or a call fails).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import anthropic  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402

from shared.config import build_settings  # noqa: E402
from shared.llm import MemorySink, Tool, call_llm, configure_llm  # noqa: E402

GOAL = 1.10
API_KEY = "fake-bench-key-not-real"
TOOL_INPUT = {
    "topics": [
        {"id": "onboarding", "label": "Onboarding", "summary": "How new hires start."},
        {"id": "payroll", "label": "Payroll", "summary": "Salaries are paid monthly."},
    ]
}

SERVER = """
import sys, time
sys.path.insert(0, sys.argv[1])
from tests.fakes.anthropic_server import FakeAnthropic, text_reply, tool_reply
TOOL_INPUT = %r
def reply(body):
    if body.get("tools"):
        return tool_reply(body["tools"][0]["name"], TOOL_INPUT)
    return text_reply("Salaries are paid on the 25th.")
with FakeAnthropic() as fake:
    fake.default = reply
    print(fake.url, flush=True)
    sys.stdin.read()
"""


class Topic(BaseModel):
    id: str = Field(pattern=r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
    label: str
    summary: str = Field(min_length=5)


class Topics(BaseModel):
    topics: list[Topic] = Field(min_length=1, max_length=10)


TOOL = Tool("save_topics", "Save the topics found in the text", Topics)


async def measure(
    paths: dict[str, Callable[[], Awaitable[Any]]], *, calls: int, block: int
) -> dict[str, list[float]]:
    """Run each path `calls` times, alternating blocks; per-call seconds by path name."""
    samples: dict[str, list[float]] = {name: [] for name in paths}
    for fn in paths.values():  # warm-up: connections, caches, first-use imports
        for _ in range(20):
            await fn()
    while any(len(s) < calls for s in samples.values()):
        for name, fn in paths.items():
            for _ in range(min(block, calls - len(samples[name]))):
                start = time.perf_counter()
                await fn()
                samples[name].append(time.perf_counter() - start)
    return samples


def report(title: str, samples: dict[str, list[float]]) -> float:
    """Print medians/p90 for bare and call_llm; return the median ratio."""
    bare, lib = samples["bare"], samples["call_llm"]

    def p90(xs: list[float]) -> float:
        return statistics.quantiles(xs, n=10)[-1]

    ratio = statistics.median(lib) / statistics.median(bare)
    print(f"\n{title} ({len(bare)} calls each)")
    print(f"  bare messages.create  median {statistics.median(bare) * 1e3:7.3f} ms  "
          f"p90 {p90(bare) * 1e3:7.3f} ms")  # fmt: skip
    print(f"  call_llm              median {statistics.median(lib) * 1e3:7.3f} ms  "
          f"p90 {p90(lib) * 1e3:7.3f} ms")  # fmt: skip
    verdict = "ok" if ratio <= GOAL else "ABOVE GOAL"
    print(f"  median ratio call_llm/bare = {ratio:.3f} (goal ≤ {GOAL:.2f}: {verdict})")
    return ratio


async def run(url: str, *, calls: int, block: int) -> None:
    settings = build_settings(anthropic_base_url=url, anthropic_api_key=API_KEY, llm="anthropic")
    model = settings.model_for_tier("fast")
    sink = MemorySink()
    configure_llm(settings, sink=sink)
    client = anthropic.AsyncAnthropic(api_key=API_KEY, base_url=url, max_retries=0, timeout=60)
    messages = [{"role": "user", "content": "When are salaries paid?"}]
    tool_param = TOOL.to_param()

    async def bare_text() -> None:
        msg = await client.messages.create(model=model, max_tokens=256, messages=messages)
        assert msg.content[0].text

    async def lib_text() -> None:
        result = await call_llm(task="bench", tier="fast", messages=messages, max_tokens=256)
        assert result.text

    async def bare_tool() -> None:
        msg = await client.messages.create(
            model=model,
            max_tokens=256,
            messages=messages,
            tools=[tool_param],
            tool_choice={"type": "tool", "name": TOOL.name},
        )
        assert msg.content[0].input

    async def lib_tool() -> None:
        result = await call_llm(
            task="bench",
            tier="fast",
            messages=messages,
            tools=[TOOL],
            tool_choice=TOOL.name,
            max_tokens=256,
        )
        assert result.tool_uses[0].parsed.topics

    text = await measure({"bare": bare_text, "call_llm": lib_text}, calls=calls, block=block)
    tool = await measure({"bare": bare_tool, "call_llm": lib_tool}, calls=calls, block=block)
    report("plain text reply", text)
    report("forced tool call, input validated by call_llm", tool)
    expected = 2 * (calls + 20)
    if len(sink.records) != expected or not all(r.ok for r in sink.records):
        raise SystemExit(f"broken run: {len(sink.records)} telemetry records, expected {expected}")
    await client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--block", type=int, default=25)
    args = parser.parse_args()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER % (TOOL_INPUT,), str(ROOT)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            raise SystemExit(f"fake server did not start (got {url!r})")
        print(f"fake Anthropic at {url} (child process); SDK anthropic {anthropic.__version__}")
        asyncio.run(run(url, calls=args.calls, block=args.block))
    finally:
        server.terminate()
        server.wait(10)


if __name__ == "__main__":
    main()
