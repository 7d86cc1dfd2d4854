"""What the shared NATS KV rate limiter adds to an LLM call, as the service host runs it.

The fake Anthropic server runs in a child process; an embedded nats-server holds the
limiter's KV bucket. Three paths, alternating in blocks so drift hits all alike:
  bare      AsyncAnthropic.messages.create (the SDK alone)
  no-limit  call_llm with the limiter off (R42_LIMITER=off)
  limited   call_llm with the NATS KV limiter (acquire + settle, compare-and-swap on the
            bucket) wrapped and metered by shared.obs, telemetry going to the obs sink —
            the way start_service wires it; budgets are set far above the call rate, so
            the figure is the limiter's own cost, never a wait for budget
  unmetered the same limiter without shared.obs's wrapper (what the metrics cost)
Prints medians, p90 and the ratios limited/bare and limited/no-limit.

    python bench/bench_limiter_overhead.py [--calls 400] [--block 20]

Exits non-zero only when the run is broken (a server or a call fails).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import anthropic  # noqa: E402

from bench.bench_llm_overhead import SERVER, TOOL_INPUT, measure  # noqa: E402
from shared.config import build_settings  # noqa: E402
from shared.llm import MemorySink, call_llm, configure_llm, open_limiter  # noqa: E402
from shared.llm.limiter_config import LimiterConfig, tier1_limits  # noqa: E402
from shared.obs.host import prepare_obs  # noqa: E402
from shared.runtime import EmbeddedNatsServer  # noqa: E402

API_KEY = "fake-bench-key-not-real"


def _line(name: str, xs: list[float]) -> str:
    p90 = statistics.quantiles(xs, n=10)[-1]
    return f"  {name:9s} median {statistics.median(xs) * 1e3:7.3f} ms  p90 {p90 * 1e3:7.3f} ms"


async def run(api_url: str, nats_url: str, *, calls: int, block: int, data: Path) -> None:
    settings = build_settings(anthropic_base_url=api_url, anthropic_api_key=API_KEY,
                              llm="anthropic", data_dir=data)  # fmt: skip
    model = settings.model_for_tier("fast")
    messages: Any = [{"role": "user", "content": "When are salaries paid?"}]
    client = anthropic.AsyncAnthropic(api_key=API_KEY, base_url=api_url, max_retries=0,
                                      timeout=60)  # fmt: skip
    obs = prepare_obs("bench", settings)
    # Budgets far above the call rate: acquire never waits, so what remains is the overhead.
    roomy = tier1_limits(rpm=1e6, itpm=1e9, otpm=1e9)
    config = LimiterConfig(classes={"haiku": roomy, "sonnet": roomy, "opus": roomy})
    inner = await open_limiter(mode="nats", nats_url=nats_url, bucket="bench_limits",
                               config=config)  # fmt: skip
    limiter = obs.observe_limiter(inner)
    sink = MemorySink()
    configure_llm(settings, sink=obs.observe_sink(sink), limiter=None)

    async def bare() -> None:
        msg = await client.messages.create(model=model, max_tokens=256, messages=messages)
        assert msg.content[0].type == "text" and msg.content[0].text

    async def no_limit() -> None:
        result = await call_llm(task="bench", tier="fast", messages=messages, max_tokens=256)
        assert result.text

    async def unmetered() -> None:
        result = await call_llm(task="bench", tier="fast", messages=messages, max_tokens=256,
                                limiter=inner)  # fmt: skip
        assert result.text

    async def limited() -> None:
        result = await call_llm(task="bench", tier="fast", messages=messages, max_tokens=256,
                                limiter=limiter)  # fmt: skip
        assert result.text

    try:
        samples = await measure({"bare": bare, "no-limit": no_limit, "unmetered": unmetered,
                                 "limited": limited},
                                calls=calls, block=block)  # fmt: skip
    finally:
        assert limiter is not None
        await limiter.aclose()  # type: ignore[attr-defined]
        await client.close()
        await obs.aclose()
    med = {name: statistics.median(xs) for name, xs in samples.items()}
    print(f"\nplain text reply, fast tier ({calls} calls per path)")
    for name, xs in samples.items():
        print(_line(name, xs))
    print(
        f"  limited / bare      = {med['limited'] / med['bare']:.2f}x  "
        f"(+{(med['limited'] - med['bare']) * 1e3:.3f} ms)"
    )
    print(
        f"  limited / no-limit  = {med['limited'] / med['no-limit']:.2f}x  "
        f"(+{(med['limited'] - med['no-limit']) * 1e3:.3f} ms: the limiter's KV round trips)"
    )
    waits = next(iter(obs.metrics.limiter_wait.collect())).samples
    count = next(s.value for s in waits if s.name.endswith("_count"))
    print(
        f"  limited / unmetered = {med['limited'] / med['unmetered']:.2f}x  "
        "(what shared.obs's limiter metrics add)"
    )
    if count != calls + 20 or len(sink.records) != 3 * (calls + 20):
        raise SystemExit(f"broken run: {count} limiter waits, {len(sink.records)} records")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--block", type=int, default=20)
    args = parser.parse_args()
    server = subprocess.Popen([sys.executable, "-c", SERVER % (TOOL_INPUT,), str(ROOT)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="r42-limiter-bench-") as tmp:
        nats = EmbeddedNatsServer(Path(tmp) / "nats").start()
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            if not url.startswith("http://127.0.0.1:"):
                raise SystemExit(f"fake server did not start (got {url!r})")
            os.environ.pop("OTEL_EXPORTER_OTLP_ENDPOINT", None)
            print(f"fake Anthropic at {url} (child process); nats-server at {nats.url}")
            asyncio.run(run(url, nats.url, calls=args.calls, block=args.block, data=Path(tmp)))
        finally:
            nats.stop()
            server.terminate()
            server.wait(10)


if __name__ == "__main__":
    main()
