"""Footprint of `r42 up`: total RSS of its process tree and the time to the first answer.

Run: python bench/bench_footprint.py [--runs 3] [--settle 8] [--against CHECKOUT]
Each run starts `r42 up --no-console` on a fresh data dir (offline LLM, no Slack, stdin
not a terminal), then asks rpc.r42.chat over the bus every 50 ms until the first successful
reply: the time from spawn to that reply is "first answer". RSS (psutil, every process under
`r42 up`, nats-server included) is sampled until every service's status file says ready
and `--settle` seconds passed (the bundled handbook is being ingested meanwhile); the figure
is the largest total seen. Prints medians against the goals (≤ 450 MB, ≤ 2.5 s) and the
per-process split of the median run. With `--against` another checkout (its own `.venv`,
e.g. a worktree of main) runs alternately in the same rounds as the baseline, and the ratios
to it are printed. Exits non-zero only when a run is broken.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402

from shared.bus import (  # noqa: E402
    CHAT_SUBJECT,
    ChatReply,
    ChatRequest,
    NatsAuth,
    build_broker,
    request,
)
from shared.errors import R42Error  # noqa: E402

GOAL_RSS_MB = 450
GOAL_FIRST_ANSWER_S = 2.5


def _label(proc: psutil.Process) -> str:
    try:
        cmd = proc.cmdline()
    except psutil.Error:
        return "?"
    if any("nats-server" in part for part in cmd[:1]):
        return "nats-server"
    for part in cmd:
        if part.startswith("services.") and part != "services.cli.main":
            return str(part).removeprefix("services.")
    if "up" in cmd:
        return "r42 up"
    return " ".join(Path(c).name for c in cmd[:3])


def tree_rss(root: psutil.Process) -> dict[str, float]:
    """RSS in MB per process of the tree (a label per process; repeats get a suffix)."""
    found: dict[str, float] = {}
    try:
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return found
    for proc in procs:
        try:
            rss = proc.memory_info().rss / 2**20
        except psutil.Error:
            continue
        label = _label(proc)
        while label in found:
            label += "'"
        found[label] = rss
    return found


async def first_answer(data: Path, started: float, deadline: float) -> float:
    """Seconds from spawn to the first successful chat reply."""
    state_file = data / "runtime.json"
    while not state_file.exists():
        if time.perf_counter() > deadline:
            raise RuntimeError("r42 up wrote no runtime state")
        await asyncio.sleep(0.02)
    state = json.loads(state_file.read_text())
    # The embedded server refuses anonymous clients: ask as the data dir's CLI user.
    auth = NatsAuth(Path(state["users_dir"]) / "cli.nk", "_INBOX_cli")
    broker = build_broker(state["nats_url"], name="bench-footprint", auth=auth)
    await broker.start()
    ask = ChatRequest(user_id="bench", text="Hoe vraag ik verlof aan?")
    try:
        while time.perf_counter() < deadline:
            try:
                reply = await request(broker, CHAT_SUBJECT, ask, response_model=ChatReply,
                                      timeout=5)  # fmt: skip
            except R42Error:
                await asyncio.sleep(0.05)
                continue
            if reply.error_ref is None:
                return time.perf_counter() - started
            raise RuntimeError(f"the first answer failed: {reply.text}")
    finally:
        await broker.stop()
    raise RuntimeError("no answer before the deadline")


def all_ready(data: Path) -> bool:
    """Whether every service `r42 up` runs has a status file saying ready."""
    try:
        state = json.loads((data / "runtime.json").read_text())
        names = list(state["services"])
    except (OSError, ValueError, KeyError):
        return False
    if not names or state.get("pending"):  # a staged start has not started everything yet
        return False
    for name in names:
        path = data / "run" / f"{name}.json"
        try:
            if not json.loads(path.read_text())["ready"]:
                return False
        except (OSError, ValueError, KeyError):
            return False
    return True


Run = tuple[float, float, dict[str, float]]


def one_run(settle: float, *, wait_ready: bool = True, r42: Path | None = None) -> Run:
    """(first answer s, peak total RSS MB, per-process RSS at the peak)."""
    with tempfile.TemporaryDirectory(prefix="r42-footprint-") as tmp:
        data = Path(tmp) / "data"
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("R42_", "SLACK_", "ANTHROPIC_", "NATS_", "OTEL_"))}  # fmt: skip
        env.update({"R42_DATA_DIR": str(data), "R42_LLM": "offline"})
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user runs it: bytecode is cached
        r42 = r42 or Path(sys.executable).parent / "r42"
        started = time.perf_counter()
        proc = subprocess.Popen([str(r42), "up", "--no-console", "--data-dir", str(data)],
                                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, cwd=tmp)  # fmt: skip
        root = psutil.Process(proc.pid)
        try:
            answer_s = asyncio.run(first_answer(data, started, started + 60))
            peak, split = 0.0, {}
            ready_at = None
            while time.perf_counter() < started + 90:
                sample = tree_rss(root)
                if sum(sample.values()) > peak:
                    peak, split = sum(sample.values()), sample
                if ready_at is None and (not wait_ready or all_ready(data)):
                    ready_at = time.perf_counter()
                if ready_at is not None and time.perf_counter() - ready_at >= settle:
                    break
                time.sleep(0.25)
            if ready_at is None:
                raise RuntimeError("not every service became ready within 90 s")
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                _, err = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                _, err = proc.communicate()
        if proc.returncode not in (0, -signal.SIGTERM, 128 + signal.SIGTERM):
            raise RuntimeError(f"r42 up exited {proc.returncode}: {err.decode()[-2000:]}")
        return answer_s, peak, split


def _report(title: str, runs: list[Run]) -> tuple[float, float]:
    answers = [r[0] for r in runs]
    peaks = [r[1] for r in runs]
    median_run = sorted(runs, key=lambda r: r[1])[len(runs) // 2]
    rss, first = statistics.median(peaks), statistics.median(answers)
    print(title)
    print(f"  total RSS (peak)  median {rss:6.0f} MB  goal ≤ {GOAL_RSS_MB} MB  "
          f"ratio {rss / GOAL_RSS_MB:.2f}  {'ok' if rss <= GOAL_RSS_MB else 'OVER'}")  # fmt: skip
    print(f"  first answer      median {first:6.2f} s   goal ≤ {GOAL_FIRST_ANSWER_S} s   "
          f"ratio {first / GOAL_FIRST_ANSWER_S:.2f}  "
          f"{'ok' if first <= GOAL_FIRST_ANSWER_S else 'OVER'}")  # fmt: skip
    print(
        f"  runs: RSS {', '.join(f'{p:.0f}' for p in peaks)} MB; "
        f"first answer {', '.join(f'{a:.2f}' for a in answers)} s"
    )
    print("  per process (median run): " + ", ".join(
        f"{name} {mb:.0f}" for name, mb in sorted(median_run[2].items(), key=lambda kv: -kv[1])
    ) + " MB")  # fmt: skip
    return rss, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--settle", type=float, default=8.0, help="seconds sampled after ready")
    parser.add_argument(
        "--no-ready-wait",
        action="store_true",
        help="sample --settle s after the first answer (no status files)",
    )
    parser.add_argument("--against", type=Path, help="a baseline checkout with its own .venv")
    args = parser.parse_args()
    base_r42 = args.against / ".venv" / "bin" / "r42" if args.against else None
    if base_r42 is not None and not base_r42.exists():
        parser.error(f"{base_r42} does not exist (run `make .venv/.installed` there)")
    load = os.getloadavg()
    runs: list[Run] = []
    base: list[Run] = []
    for _ in range(args.runs):  # alternately, so both see the same load
        if base_r42 is not None:
            base.append(one_run(args.settle, wait_ready=not args.no_ready_wait, r42=base_r42))
        runs.append(one_run(args.settle, wait_ready=not args.no_ready_wait))
    where = f"load {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} at the start"
    rss, first = _report(
        f"r42 up footprint ({args.runs} runs, offline, console off; {where})", runs
    )
    if base:
        base_rss, base_first = _report(f"baseline {args.against} (same rounds)", base)
        print(f"  this / baseline: RSS {rss / base_rss:.2f}, first answer {first / base_first:.2f}")


if __name__ == "__main__":
    main()
