"""The embedded nats-server starts with JetStream and answers."""

from __future__ import annotations

import nats

from shared.runtime import EmbeddedNatsServer


async def test_session_server_has_jetstream(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        info = await nc.jetstream().account_info()
        assert info.limits is not None
    finally:
        await nc.close()


def test_start_stop_leaves_nothing_running(tmp_path) -> None:
    server = EmbeddedNatsServer(tmp_path).start()
    proc = server.proc
    assert proc is not None and proc.poll() is None
    assert server.url.startswith("nats://127.0.0.1:")
    server.stop()
    assert proc.poll() is not None
