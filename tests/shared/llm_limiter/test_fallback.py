"""When NATS is unreachable the limiter limits in-process, warns once, and comes back later."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import nats
import pytest

from shared.llm.limiter import NatsKvLimiter
from shared.llm.limiter_kv import bind_bucket, read
from shared.runtime import EmbeddedNatsServer, find_nats_server
from tests.shared.llm_limiter.helpers import NEVER, PATIENCE_S, blocks, sonnet_config, take

LOGGER = "shared.llm.limiter"


def records(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    """The limiter's log records at exactly `level`."""
    return [r for r in caplog.records if r.name == LOGGER and r.levelno == level]


async def test_unreachable_nats_falls_back_to_local_with_one_warning(
    caplog: pytest.LogCaptureFixture, bucket: str
) -> None:
    caplog.set_level(logging.DEBUG)
    config = sonnet_config(requests=(NEVER, 3), retry_nats_after_s=0.05)
    # Nothing listens on port 1; the credentials must never reach a log.
    limiter = await NatsKvLimiter.connect(
        "nats://limiter:hunter2-secret@127.0.0.1:1", bucket=bucket, config=config
    )
    try:
        assert limiter.mode == "local"
        for _ in range(3):
            permit = await take(limiter, inp=10, out=10)
            await asyncio.sleep(0.06)  # past retry_nats_after_s: reconnects are attempted
        await limiter.settle(permit, input_tokens=5, output_tokens=5)
        await limiter.pause(model="claude-haiku-4-5", until=time.time() + 0.01)
        assert await blocks(limiter)  # the local budget (burst 3) still holds
    finally:
        await limiter.aclose()
    warnings = records(caplog, logging.WARNING)
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert "in-process" in warnings[0].getMessage()
    assert limiter.stats.fallbacks == 1
    assert "hunter2" not in caplog.text
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def start_nats_on(port: int, store: Path) -> subprocess.Popen[bytes]:
    """A plain nats-server with JetStream on a given loopback port (to 'restart' a server)."""
    return subprocess.Popen(
        [str(find_nats_server()), "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", str(store)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[EmbeddedNatsServer]:
    """A nats-server this test may stop (the session server must stay up)."""
    server = EmbeddedNatsServer(tmp_path / "first").start()
    yield server
    server.stop()


async def test_lost_server_falls_back_then_returns_to_nats(
    own_server: EmbeddedNatsServer,
    tmp_path: Path,
    bucket: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    url = own_server.url
    limiter = await NatsKvLimiter.connect(
        url, bucket=bucket, config=sonnet_config(retry_nats_after_s=0.1, kv_timeout_s=0.5)
    )
    replacement: subprocess.Popen[bytes] | None = None
    try:
        await take(limiter)
        assert limiter.mode == "nats"
        own_server.stop()
        await take(limiter)  # still admitted, now by the local fallback
        assert limiter.mode == "local"

        # The "restarted" server: same address, empty (memory) bucket.
        replacement = start_nats_on(urlsplit(url).port or 0, tmp_path / "second")
        deadline = time.monotonic() + PATIENCE_S * 2
        while limiter.mode != "nats":
            assert time.monotonic() < deadline, "never went back to NATS"
            await take(limiter)
            await asyncio.sleep(0.1)
        await take(limiter, inp=3)  # decided in the recreated bucket

        nc = await nats.connect(url)
        try:
            kv = await bind_bucket(nc, bucket, op_timeout_s=5)
            assert (await read(kv, "gcra.sonnet"))[1] is not None
        finally:
            await nc.close()
    finally:
        await limiter.aclose()
        if replacement is not None:
            replacement.terminate()
            replacement.wait(10)
    assert len(records(caplog, logging.WARNING)) == 1
    assert any("is back" in r.getMessage() for r in records(caplog, logging.INFO))
