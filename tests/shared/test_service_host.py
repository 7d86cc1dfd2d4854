"""The service host wires settings, store, bus and LLM, runs handlers and stops cleanly."""

from __future__ import annotations

import asyncio

import pytest

from shared.bus import KbUpdated, publish_event
from shared.config import build_settings
from shared.errors import ConfigError
from shared.llm import get_runtime
from shared.runtime.service import (
    ServiceContext,
    ServiceSpec,
    Subscription,
    resolve_nats_url,
    start_service,
    stop_service,
)


async def test_service_receives_events_and_stops(nats_url: str, unique: str, tmp_path) -> None:
    got: list[KbUpdated] = []
    seen = asyncio.Event()

    async def on_kb(event: KbUpdated) -> None:
        got.append(event)
        seen.set()

    def build(ctx: ServiceContext) -> ServiceSpec[None]:
        return ServiceSpec(deps=None, subscriptions=[Subscription(KbUpdated, f"t{unique}", on_kb)])

    settings = build_settings(nats_url=nats_url, store=f"sqlite:///{tmp_path}/s.db", llm="offline")
    ctx = await start_service("t", build=build, settings=settings, namespace=f"n{unique}")
    try:
        assert get_runtime().provider.name == "offline"
        await publish_event(ctx.broker, KbUpdated(kb_hash="abc", reason="test", actor="t"),
                            namespace=ctx.namespace)  # fmt: skip
        await asyncio.wait_for(seen.wait(), 10)
        assert got[0].kb_hash == "abc"
        assert await ctx.store.topics.ids() == set()
    finally:
        await stop_service(ctx)


def test_nats_url_needs_env_or_running_stack(tmp_path) -> None:
    settings = build_settings(data_dir=tmp_path)
    with pytest.raises(ConfigError, match="r42 up"):
        resolve_nats_url(settings)


def test_bad_settings_exit_with_a_clear_line_not_a_traceback(tmp_path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "R42_LLM": "bogus", "R42_DATA_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "services.telemetry"], env=env, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "telemetry: invalid settings: llm:" in done.stderr
    assert "Traceback" not in done.stderr
