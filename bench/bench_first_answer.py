"""First answer of a newcomer: `r42 up` on a terminal, the README's question typed at the prompt.

Run: python bench/bench_first_answer.py [--runs 3] [--against CHECKOUT | --plain]
Each run starts `r42 up` on a pseudo-terminal (the console, as `make up` opens it) on a fresh
data dir with the offline LLM, types the README's question the moment the prompt shows, and
times the answer (its "Bronnen:" line) from the spawn, from the "up" banner and from the prompt.
The same question asked again at once is the baseline: a warm turn on the same stack, so the
ratio says what the first answer costs beyond a normal one. Also prints whether the console said
the sample handbook was still being read, and when that ingest finished (from the store).
Goals: ≤ 2.5 s after start (issue 19), ≤ 3 s after the prompt (issue 20). With `--against`
another checkout (its own `.venv`, e.g. a worktree of main) runs alternately in the same
rounds, and its medians and the ratios to it are printed; `--plain` does the same with this
checkout's services spawned one by one (R42_FORK_SERVER=false) instead of forked.
"""

from __future__ import annotations

import argparse
import os
import re
import select
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

QUESTION = "Hoeveel dagen ouderschapsverlof krijg ik?"
BANNERS = ("R42 draait", "R42 is up")
PROMPT = "jij> "
STILL_READING = "voorbeeldhandboek wordt nog ingelezen"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")
GOAL_FROM_START_S = 2.5
GOAL_FROM_PROMPT_S = 3.0


class Pty:
    """A process on a pseudo-terminal; `wait_for` reads until a pattern shows."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: str) -> None:
        self.fd, child = os.openpty()
        self.proc = subprocess.Popen(argv, stdin=child, stdout=child, stderr=child, env=env,
                                     cwd=cwd, start_new_session=True)  # fmt: skip
        os.close(child)
        self.raw = b""

    @property
    def screen(self) -> str:
        return ANSI.sub("", self.raw.decode("utf-8", errors="replace"))

    def wait_for(self, pattern: str, *, since: int = 0, timeout: float = 120.0) -> int:
        deadline = time.perf_counter() + timeout
        while (found := re.search(pattern, self.screen[since:])) is None:
            left = deadline - time.perf_counter()
            if left <= 0 or self.proc.poll() is not None:
                raise SystemExit(f"{pattern!r} not shown; screen:\n{self.screen[-3000:]}")
            # A short wait: the figure is when the text shows, not when a coarse poll looks.
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.005))
            if ready:
                try:
                    self.raw += os.read(self.fd, 65536)
                except OSError:
                    pass
        return since + found.end()

    def ask(self, line: str) -> tuple[float, str]:
        """Type a line; seconds until its answer's sources and the next prompt, and the text."""
        start = len(self.screen)
        t0 = time.perf_counter()
        os.write(self.fd, line.encode() + b"\r")
        end = self.wait_for(r"Bronnen:[^\n]*\n(.|\n)*?" + re.escape(PROMPT), since=start)
        return time.perf_counter() - t0, self.screen[start:end]

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
        os.close(self.fd)


@dataclass
class RunFigures:
    banner_s: float
    prompt_s: float
    answer_s: float  # from the spawn
    warm_s: float
    said_reading: bool
    ingest_done_s: float | None  # from the spawn, when the sample handbook was all read

    @property
    def after_banner(self) -> float:
        return self.answer_s - self.banner_s

    @property
    def after_prompt(self) -> float:
        return self.answer_s - self.prompt_s


def _ingest_done(db: Path) -> bool:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1) as conn:
            rows = conn.execute("select status from sources where id like 'sample-%'").fetchall()
    except sqlite3.Error:
        return False
    return bool(rows) and all(r[0] in ("completed", "failed") for r in rows)


def one_run(r42_bin: Path | None = None, *, plain: bool = False) -> RunFigures:
    with tempfile.TemporaryDirectory(prefix="r42-first-answer-") as tmp:
        data = Path(tmp) / "data"
        drop = ("R42_", "SLACK_", "ANTHROPIC_", "NATS_", "TEAMS_")
        env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
        # As a user runs it: Python caches bytecode (a shell with this set recompiles every
        # module in every process, every start).
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        if plain:
            env["R42_FORK_SERVER"] = "false"
        env.update(R42_DATA_DIR=str(data), R42_LLM="offline", COLUMNS="100", LINES="40",
                   TERM="xterm-256color")  # fmt: skip
        r42 = str(r42_bin or Path(sys.executable).parent / "r42")
        started = time.perf_counter()
        term = Pty([r42, "up"], env, tmp)
        done_at: list[float] = []
        stop = threading.Event()

        def watch() -> None:
            while not stop.wait(0.1):
                if _ingest_done(data / "r42.db"):
                    done_at.append(time.perf_counter() - started)
                    return

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            banner_at = term.wait_for("|".join(BANNERS), timeout=180)
            banner_s = time.perf_counter() - started
            term.wait_for(re.escape(PROMPT), since=banner_at)
            prompt_s = time.perf_counter() - started
            took, shown = term.ask(QUESTION)
            answer_s = prompt_s + took
            warm_s, _ = term.ask(QUESTION)
            watcher.join(90)
        finally:
            stop.set()
            term.close()
        done_s = done_at[0] if done_at else None
        if "Ouderschapsverlof" not in shown:
            raise SystemExit(f"the first answer is not about the topic:\n{shown}")
        return RunFigures(banner_s, prompt_s, answer_s, warm_s, STILL_READING in shown, done_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--against", type=Path, help="a baseline checkout with its own .venv")
    parser.add_argument("--plain", action="store_true",
                        help="baseline: this checkout with R42_FORK_SERVER=false")  # fmt: skip
    args = parser.parse_args()
    if args.plain and args.against:
        parser.error("--plain and --against are two different baselines: pick one")
    base_r42 = args.against / ".venv" / "bin" / "r42" if args.against else None
    if base_r42 is not None and not base_r42.exists():
        parser.error(f"{base_r42} does not exist (run `make .venv/.installed` there)")
    load = os.getloadavg()
    runs: list[RunFigures] = []
    base: list[RunFigures] = []
    for _ in range(args.runs):  # alternately, so both see the same load
        if base_r42 is not None or args.plain:
            base.append(one_run(base_r42, plain=args.plain))
        runs.append(one_run())

    def med(values: list[float]) -> float:
        return statistics.median(values)

    first = med([r.answer_s for r in runs])
    after_prompt = med([r.after_prompt for r in runs])
    warm = med([r.warm_s for r in runs])
    print(f"first answer through the console ({args.runs} runs, offline LLM; load "
          f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f})")  # fmt: skip
    print(f"  banner           median {med([r.banner_s for r in runs]):6.2f} s after start")
    print(f"  prompt           median {med([r.prompt_s for r in runs]):6.2f} s after start")
    print(f"  first answer     median {first:6.2f} s after start   goal ≤ {GOAL_FROM_START_S} s"
          f"  {'ok' if first <= GOAL_FROM_START_S else 'OVER'}")  # fmt: skip
    print(
        f"                   median {med([r.after_banner for r in runs]):6.2f} s after the banner"
    )
    verdict = "ok" if after_prompt <= GOAL_FROM_PROMPT_S else "OVER"
    print(f"                   median {after_prompt:6.2f} s after the prompt  goal ≤ "
          f"{GOAL_FROM_PROMPT_S} s  {verdict}")  # fmt: skip
    print(f"  warm answer      median {warm:6.2f} s (baseline: the same question again); "
          f"first after the prompt / warm = {after_prompt / warm:.1f}x")  # fmt: skip
    for i, r in enumerate(runs, 1):
        done = f"{r.ingest_done_s:.1f} s" if r.ingest_done_s is not None else "never"
        print(f"  run {i}: banner {r.banner_s:.2f} s, prompt {r.prompt_s:.2f} s, answer "
              f"{r.answer_s:.2f} s ({r.after_prompt:.2f} s after the prompt), warm "
              f"{r.warm_s:.2f} s; said the handbook was still being read: "
              f"{'yes' if r.said_reading else 'no'}; sample handbook read by {done}")  # fmt: skip
    if base:
        base_first = med([r.answer_s for r in base])
        base_prompt = med([r.prompt_s for r in base])
        which = "R42_FORK_SERVER=false" if args.plain else args.against
        print(f"  baseline {which} (same rounds): prompt {base_prompt:.2f} s, first answer "
              f"{base_first:.2f} s after start (runs: "
              f"{', '.join(f'{r.answer_s:.2f}' for r in base)} s)")  # fmt: skip
        prompt = med([r.prompt_s for r in runs])
        print(f"  this / baseline: prompt {prompt / base_prompt:.2f}, "
              f"first answer {first / base_first:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
