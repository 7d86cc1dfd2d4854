"""What prompt caching saves on R42 turns over the sample handbook, against the caching fake API.

Run: python bench/bench_prompt_cache.py [--turns 40]
Runs the same sequence of chat turns (distinct questions, one KB version) twice against the
fake Anthropic server, which caches as the API does (tests/fakes/anthropic_cache.py: its
tokenizer is ceil(chars / 3), the real one is not public): once as R42 runs (cache marks kept
where the prefix reaches the fast model's minimum) and, as the baseline in the same run, with
every mark dropped. Prints input tokens billed per turn (cache writes at 1.25x, reads at
0.1x of the input price, as Anthropic bills them), cost per turn and the ratio, and the time
fit_breakpoints takes on one turn's request (no count needed at this KB size). Exits
non-zero only when a run is broken.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evals.kb import load_handbook  # noqa: E402
from services.r42.knowledge import KbCache  # noqa: E402
from services.r42.turn import chat_turn  # noqa: E402
from shared.bus import ChatRequest  # noqa: E402
from shared.llm import MemorySink, caching, reset_llm  # noqa: E402
from shared.store import open_store  # noqa: E402
from tests.fakes.anthropic_server import FakeAnthropic, text_reply  # noqa: E402
from tests.fakes.fixtures import configure_llm_for_fake  # noqa: E402

QUESTIONS = [
    "Hoe werkt het pensioen?", "Hoeveel vakantiedagen heb ik?", "Hoe declareer ik reiskosten?",
    "Wie keurt mijn verlof goed?", "Hoe werkt thuiswerken?", "Wat is radicale transparantie?",
    "Hoe vraag ik ouderschapsverlof aan?", "Wat doet een product owner?",
]  # fmt: skip


async def run_turns(turns: int, *, cached: bool) -> tuple[list[float], list[float], float]:
    """Billed input tokens and cost per turn, and fit_breakpoints' median time per call (ms)."""
    real_minimum = caching.min_cacheable_tokens
    if not cached:
        caching.min_cacheable_tokens = lambda model: 10**9
    try:
        with tempfile.TemporaryDirectory(prefix="bench-cache-") as tmp, FakeAnthropic() as fake:
            fake.default = lambda body: text_reply("Zie het handboek (Pensioenregeling).")
            store = await open_store(f"sqlite:///{Path(tmp) / 'r42.db'}")
            sink = MemorySink()
            runtime = configure_llm_for_fake(fake, sink=sink)
            kb = KbCache(store)
            try:
                await load_handbook(store)
                for n in range(turns):
                    question = f"{QUESTIONS[n % len(QUESTIONS)]} ({n})"
                    request = ChatRequest(user_id=f"U{n}", text=question)
                    reply = await chat_turn(store=store, kb=kb, request=request)
                    if reply.error_ref is not None:
                        raise RuntimeError(f"turn {n} failed: {reply.text}")
                body = fake.requests[-1].body
                spent = []
                for _ in range(200):
                    params = copy.deepcopy(body)
                    t0 = time.perf_counter()
                    await caching.fit_breakpoints("bench", params)
                    spent.append((time.perf_counter() - t0) * 1000)
            finally:
                await kb.aclose()
                await store.close()
                await runtime.aclose()
                reset_llm()
    finally:
        caching.min_cacheable_tokens = real_minimum
    billed = [
        r.input_tokens + 1.25 * r.cache_creation_input_tokens + 0.1 * r.cache_read_input_tokens
        for r in sink.records
    ]
    return billed, [r.cost_usd for r in sink.records], statistics.median(spent)


def main() -> int:
    """Measure both runs and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    if args.turns < 2:
        parser.error("--turns must be >= 2")
    billed, cost, fit_ms = asyncio.run(run_turns(args.turns, cached=True))
    base_billed, base_cost, base_fit_ms = asyncio.run(run_turns(args.turns, cached=False))
    mean, base = statistics.mean(billed), statistics.mean(base_billed)
    cost_mean, base_cost_mean = statistics.mean(cost), statistics.mean(base_cost)
    print(f"R42 turns over the sample handbook, fake API tokenizer, {args.turns} turns")
    print(f"  cached   input billed/turn {mean:9.0f} tok  cost/turn ${cost_mean:.5f}  "
          f"fit_breakpoints {fit_ms:.3f} ms/call")  # fmt: skip
    print(f"  no marks input billed/turn {base:9.0f} tok  cost/turn ${base_cost_mean:.5f}  "
          f"fit_breakpoints {base_fit_ms:.3f} ms/call")  # fmt: skip
    ratio = f"input {mean / base:.2f}x  cost {cost_mean / base_cost_mean:.2f}x"
    first = f"the first turn writes the cache: {billed[0]:.0f} vs {base_billed[0]:.0f} tok"
    print(f"  cached / no marks: {ratio}  ({first})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
