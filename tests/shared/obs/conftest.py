"""Helpers to run real service processes and read their status files and endpoints."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shared.runtime import EmbeddedNatsServer
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.fixtures import FAKE_ANTHROPIC_API_KEY

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def own_nats(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedNatsServer]:
    """A nats-server of its own: service processes use the default (un-namespaced) streams."""
    server = EmbeddedNatsServer(tmp_path_factory.mktemp("obs-nats")).start()
    yield server
    server.stop()


class ServiceProcess:
    """`python -m services.<name>` with the test's environment; stopped with SIGTERM."""

    def __init__(self, name: str, env: dict[str, str], log: Path) -> None:
        self.name = name
        self.log = log
        self._fh = log.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", f"services.{name}"], env=env, cwd=REPO,
            stdout=self._fh, stderr=subprocess.STDOUT,
        )  # fmt: skip

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._fh.close()
        return self.proc.returncode

    def output(self) -> str:
        return self.log.read_text(errors="replace")


def service_env(*, nats_url: str, data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment a supervised service would get, offline, on a temp store."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("R42_", "OTEL_"))}
    env.update({
        "NATS_URL": nats_url, "R42_DATA_DIR": str(data_dir), "R42_LLM": "offline",
        "R42_STORE": f"sqlite:///{data_dir / 'r42.db'}", "PYTHONPATH": str(REPO),
    })  # fmt: skip
    env.update(extra)
    return env


def wait_ready(
    data_dir: Path, instance: str, proc: ServiceProcess, timeout: float = 60
) -> dict[str, Any]:
    """The status file of `instance` once it says ready (fails with the service's log)."""
    path = data_dir / "run" / f"{instance}.json"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.proc.poll() is not None:
            pytest.fail(f"{proc.name} exited {proc.proc.returncode}:\n{proc.output()[-3000:]}")
        if path.exists():
            status: dict[str, Any] = json.loads(path.read_text())
            if status["ready"]:
                return status
        time.sleep(0.1)
    pytest.fail(f"{instance} not ready in {timeout} s:\n{proc.output()[-3000:]}")


@pytest.fixture
def hosted_env(
    nats_url: str, tmp_path: Path, fake_anthropic: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> FakeAnthropic:
    """The environment a service host reads: session NATS, a temp store, the fake Anthropic."""
    for key, value in {
        "NATS_URL": nats_url, "R42_STORE": f"sqlite:///{tmp_path / 'hosted.db'}",
        "ANTHROPIC_BASE_URL": fake_anthropic.url, "ANTHROPIC_API_KEY": FAKE_ANTHROPIC_API_KEY,
        "R42_LLM": "anthropic", "R42_LIMITER": "local",
    }.items():  # fmt: skip
        monkeypatch.setenv(key, value)
    return fake_anthropic
