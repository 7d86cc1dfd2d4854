"""Socket Mode: with SLACK_APP_TOKEN the gateway connects over a websocket and acks envelopes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

import pytest

from services.gateway.app import build
from services.gateway.slack.service import Mode
from shared.runtime.service import ServiceContext, start_service
from tests.fakes.fixtures import FAKE_SLACK_APP_TOKEN
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.conftest import R42Stub
from tests.services.gateway.harness import (
    USER,
    gateway_deps,
    gateway_settings,
    start_owners,
    stop_all,
)


@pytest.fixture
async def socket_gateway(
    nats_url: str, tmp_path: Path, fake_slack: FakeSlack, unique: str
) -> AsyncIterator[ServiceContext]:
    settings = gateway_settings(
        nats_url=nats_url, tmp_path=tmp_path, fake=fake_slack, slack_app_token=FAKE_SLACK_APP_TOKEN
    )
    mode = Mode("socket")
    ctx = await start_service(
        "gateway",
        build=partial(build, mode=mode, pace_interval=0),
        settings=settings,
        namespace=f"s{unique}",
    )
    owners = await start_owners(settings, namespace=ctx.namespace)
    try:
        yield ctx
    finally:
        await stop_all(owners, ctx)


async def acked(fake: FakeSlack, envelope_id: str) -> dict:
    for _ in range(500):
        found = [a for a in fake.socket_acks if a.get("envelope_id") == envelope_id]
        if found:
            return found[0]
        await asyncio.sleep(0.02)
    raise AssertionError(f"envelope {envelope_id} was never acked; acks: {fake.socket_acks}")


async def test_socket_mode_acks_commands_and_events(
    socket_gateway: ServiceContext, fake_slack: FakeSlack
) -> None:
    await fake_slack.wait_for_socket()
    opened = fake_slack.calls_to("apps.connections.open")[0]
    assert opened.headers["Authorization"] == f"Bearer {FAKE_SLACK_APP_TOKEN}"

    fake_slack.socket_send(
        {
            "envelope_id": "env-1",
            "type": "slash_commands",
            "accepts_response_payload": True,
            "payload": {
                "command": "/r42",
                "text": "help",
                "user_id": USER,
                "channel_id": "C1",
                "team_id": "T0FAKE",
                "response_url": fake_slack.response_url("sock"),
            },
        }
    )
    await acked(fake_slack, "env-1")
    shown = (await fake_slack.wait_for("respond"))[0]
    assert "/learn" in json.dumps(shown.args["blocks"])

    stub = R42Stub()
    from shared.bus import CHAT_SUBJECT, ChatRequest, serve_rpc

    await serve_rpc(
        socket_gateway.broker,
        CHAT_SUBJECT,
        request_model=ChatRequest,
        handler=stub.on_chat,
        namespace=socket_gateway.namespace,
    )
    callback = {
        "type": "event_callback",
        "team_id": "T0FAKE",
        "event_id": "EvS1",
        "event": {
            "type": "message",
            "channel_type": "im",
            "channel": "DUSER1",
            "user": USER,
            "text": "Hoi",
            "ts": "1700000000.1",
            "client_msg_id": "cm-s1",
        },
    }
    for attempt, envelope in enumerate(("env-2", "env-3")):  # the second is Slack's retry
        fake_slack.socket_send(
            {
                "envelope_id": envelope,
                "type": "events_api",
                "accepts_response_payload": False,
                "retry_attempt": attempt,
                "retry_reason": "timeout" if attempt else "",
                "payload": callback,
            }
        )
        await acked(fake_slack, envelope)
    update = (await fake_slack.wait_for("chat.update"))[0]
    assert "Antwoord op: Hoi" in json.dumps(update.args["blocks"])
    await gateway_deps(socket_gateway).current().background.drain()
    assert len(stub.chats) == 1
