"""The child bootstrap defers aiohttp (nats-py's WebSocket transport) except for the gateway."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from shared.runtime.launch import DEFERRED, deferred_for

PROBE = """
import asyncio, sys
import nats

async def main(url):
    nc = await nats.connect(url)
    sub = await nc.subscribe("launch.probe")
    await nc.publish("launch.probe", b"over tcp")
    msg = await sub.next_msg(timeout=5)
    await nc.close()
    print("loaded-before-use", "aiohttp.client" in sys.modules)
    print("got", msg.data.decode())

asyncio.run(main(sys.argv[1]))
import aiohttp  # code that does use it still gets the real package
print("works", aiohttp.ClientSession.__name__, "aiohttp.client" in sys.modules)
"""


def _launch(tmp_path: Path, module: str, *args: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    done = subprocess.run(
        [sys.executable, "-m", "shared.runtime.launch", module, *args],
        capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_a_bus_only_child_connects_without_loading_aiohttp(tmp_path: Path, nats_url: str) -> None:
    (tmp_path / "r42launchprobe.py").write_text(PROBE)
    assert _launch(tmp_path, "r42launchprobe", nats_url) == [
        "loaded-before-use False",
        "got over tcp",
        "works ClientSession True",
    ]


def test_the_gateway_gets_aiohttp_as_usual(tmp_path: Path) -> None:
    assert DEFERRED == ("aiohttp",)
    assert deferred_for("services.gateway") == ()
    assert deferred_for("services.r42") == DEFERRED
    # The gateway's own stack, Slack Bolt on aiohttp, imports and builds as it always did.
    (tmp_path / "r42launchbolt.py").write_text(
        "import sys\n"
        "from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler\n"
        "from aiohttp import web\n"
        "print(type(sys.modules['aiohttp']).__name__, web.Application.__name__)\n"
    )
    assert _launch(tmp_path, "r42launchbolt") == ["module Application"]
