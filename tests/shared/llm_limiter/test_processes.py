"""One budget shared by several OS processes through the real nats-server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.shared.llm_limiter import limiter_worker

ROOT = Path(__file__).resolve().parents[3]
PROCESSES = 4
ATTEMPTS = 12  # per process: 48 in total, for a shared burst of 20


def test_processes_together_admit_exactly_the_burst(nats_url: str, bucket: str) -> None:
    cmd = [sys.executable, "-m", "tests.shared.llm_limiter.limiter_worker", nats_url, bucket]
    procs = [
        subprocess.Popen(
            [*cmd, str(ATTEMPTS)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            assert line == "ready", proc.stderr.read() if proc.stderr else line
        for proc in procs:  # start all workers at (nearly) the same moment
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        counts = []
        for proc in procs:
            out, err = proc.communicate(timeout=60)
            assert proc.returncode == 0, err
            counts.append(int(out.strip().splitlines()[-1]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    assert sum(counts) == limiter_worker.BURST, counts
