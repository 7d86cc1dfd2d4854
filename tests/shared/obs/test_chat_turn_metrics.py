"""A Slack DM answered by the real r42 service records the chat turn's latency on both sides."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.fakes.slack_server import FakeSlack
from tests.scenarios.stack import Stack, seed, stack_settings, start_stack, stop_stack
from tests.services.gateway.harness import USER
from tests.shared.obs.scrape import label_sets, scrape, value

CHAT = "rpc.r42.chat"
SERVER, CLIENT = "r42_rpc_server_duration_seconds", "r42_rpc_client_duration_seconds"


@pytest.fixture
async def stack(
    nats_url: str, tmp_path: Path, fake_slack: FakeSlack, unique: str
) -> AsyncIterator[Stack]:
    settings = stack_settings(nats_url=nats_url, tmp_path=tmp_path, fake=fake_slack)
    await seed(settings)
    running = await start_stack(settings, fake=fake_slack, namespace=f"x{unique}",
                                services=("r42",))  # fmt: skip
    try:
        yield running
    finally:
        await stop_stack(running)


async def test_a_chat_turn_is_timed_by_r42_and_by_the_gateway(
    stack: Stack, fake_slack: FakeSlack
) -> None:
    dm = {"type": "message", "channel_type": "im", "channel": "D0USER", "user": USER,
          "text": "Hoe vraag ik verlof aan?", "ts": "1700000000.000100",
          "client_msg_id": "cm-obs-1"}  # fmt: skip
    await stack.gateway.event(dm, event_id="Ev-obs-1")
    await fake_slack.wait_for(
        "chat.stopStream", timeout=30,
        where=lambda c: "r42_feedback" in json.dumps(c.args.get("blocks")),
    )  # fmt: skip
    answered = await scrape(stack.services["r42"])
    asked = await scrape(stack.gateway.ctx)

    assert value(answered, f"{SERVER}_count", subject=CHAT, outcome="ok") == 1
    assert label_sets(answered, f"{SERVER}_count", "subject", "outcome") == {(CHAT, "ok")}
    assert value(asked, f"{CLIENT}_count", subject=CHAT, outcome="ok") == 1
    assert label_sets(asked, f"{CLIENT}_count", "subject") >= {(CHAT,)}
    assert value(asked, f"{SERVER}_count", subject=CHAT) == 0  # the gateway answers no turns
    turn = value(answered, f"{SERVER}_sum", subject=CHAT)
    assert 0 < turn <= value(asked, f"{CLIENT}_sum", subject=CHAT)  # the caller waits longer
