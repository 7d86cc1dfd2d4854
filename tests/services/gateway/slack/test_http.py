"""HTTP mode: signatures, stale timestamps, malformed payloads, acks before slow work, retries."""

from __future__ import annotations

import asyncio
import json
import time

from services.gateway.slack.listeners.learn import LEARN_ACK
from shared.bus import ContentReady, ContentRequested, publish_event
from shared.runtime.service import Subscription
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.conftest import R42Stub, seed_topics
from tests.services.gateway.harness import USER, Gateway, sign, start_gateway, start_stub


async def test_bad_signature_is_refused(gateway: Gateway, fake_slack: FakeSlack) -> None:
    body = "command=%2Fleaderboard&user_id=U1&text="
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        **sign(body, secret="not-the-secret"),
    }
    status, _ = await gateway.raw(body, headers)
    assert status == 401
    missing = {"Content-Type": "application/x-www-form-urlencoded"}
    assert (await gateway.raw(body, missing))[0] == 401
    await gateway.settle()
    assert fake_slack.calls == []


async def test_stale_timestamp_is_refused(gateway: Gateway, fake_slack: FakeSlack) -> None:
    body = "command=%2Fleaderboard&user_id=U1&text="
    stale = sign(body, timestamp=int(time.time()) - 6 * 60)
    status, _ = await gateway.raw(
        body, {"Content-Type": "application/x-www-form-urlencoded", **stale}
    )
    assert status == 401
    fresh = sign(body, timestamp=int(time.time()) - 4 * 60)  # inside the 5-minute window
    status, _ = await gateway.raw(
        body, {"Content-Type": "application/x-www-form-urlencoded", **fresh}
    )
    assert status == 200


async def test_malformed_payloads_get_400(gateway: Gateway, fake_slack: FakeSlack) -> None:
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    for body, headers in (
        ("payload=%7Bnot-json", form),
        ("payload=%5B1%2C2%5D", form),  # JSON, but not an object
        ("just some text", form),
        ("{broken", {"Content-Type": "application/json"}),
    ):
        status, _ = await gateway.raw(body, {**headers, **sign(body)})
        assert status == 400, body
    # The server is still healthy afterwards.
    assert (await gateway.command("/leaderboard"))[0] == 200


async def test_url_verification_answers_the_challenge(gateway: Gateway) -> None:
    body = json.dumps({"type": "url_verification", "challenge": "abc123", "token": "t"})
    status, text = await gateway.raw(body, {"Content-Type": "application/json", **sign(body)})
    assert status == 200 and "abc123" in text


async def test_slash_command_acks_before_the_slow_work_finishes(
    gateway: Gateway, fake_slack: FakeSlack, settings
) -> None:
    await seed_topics(gateway, ("declaraties", "Declaraties"))
    order: list[str] = []
    gate = asyncio.Event()

    async def slow_content(event: ContentRequested) -> None:
        order.append("model started")
        await gate.wait()  # the "model" answers only when the test lets it
        await content_ctx.store.content.set_part(
            event.topic_id,
            "article",
            {
                "title": "Declareren",
                "intro": "Zo werkt het.",
                "sections": [{"heading": "Stap 1", "body": "Eén. Twee. Drie."}],
                "key_takeaways": ["a", "b"],
            },
            prompt_version="t",
            topic_fingerprint=None,
        )
        order.append("model replied")
        await publish_event(
            content_ctx.broker,
            ContentReady.caused_by(
                event,
                actor="content",
                topic_id=event.topic_id,
                content_type="article",
                ok=True,
                content_ref=event.topic_id,
                reply_to=event.reply_to,
            ),
            namespace=content_ctx.namespace,
        )

    content_ctx = await start_stub(
        "content",
        settings,
        namespace=gateway.namespace,
        subscriptions=[Subscription(ContentRequested, "content", slow_content, ack_wait=60)],
    )
    gateway.others.append(content_ctx)

    status, text = await gateway.command("/learn")
    order.append("ack")
    assert status == 200 and LEARN_ACK in text
    assert "model replied" not in order
    gate.set()
    updates = await fake_slack.wait_for(
        "chat.update", where=lambda c: "Declareren" in json.dumps(c.args.get("blocks"))
    )
    assert order.index("ack") < order.index("model replied")
    assert updates[0].args["channel"] == f"D{USER[1:]}"  # in the user's DM


async def test_slack_retry_does_not_reply_twice(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack
) -> None:
    r42_stub.gate = asyncio.Event()  # the first delivery is still being answered
    event = {
        "type": "message",
        "channel_type": "im",
        "channel": "D0USER1",
        "user": USER,
        "text": "Hoe declareer ik?",
        "ts": "1700000000.000200",
        "client_msg_id": "cm-1",
    }
    assert (await gateway.event(event, event_id="Ev001"))[0] == 200
    await fake_slack.wait_for("chat.postMessage")  # the working indicator
    for retry in (1, 2, 3):
        assert (await gateway.event(event, event_id="Ev001", retry_num=retry))[0] == 200
    r42_stub.gate.set()
    await fake_slack.wait_for("chat.update")
    await gateway.settle()
    assert len(r42_stub.chats) == 1
    assert len(fake_slack.calls_to("chat.postMessage")) == 1
    assert len(fake_slack.calls_to("chat.update")) == 1


async def test_two_replicas_answer_a_retried_event_once(
    gateway: Gateway, r42_stub: R42Stub, fake_slack: FakeSlack, settings
) -> None:
    second = await start_gateway(settings, fake=fake_slack, namespace=gateway.namespace)
    gateway.others.append(second.ctx)
    event = {
        "type": "app_mention",
        "channel": "C0PUBLIC",
        "user": USER,
        "text": "<@UBOT> wat is onboarding?",
        "ts": "1700000000.000300",
    }
    assert (await gateway.event(event, event_id="Ev002"))[0] == 200
    assert (await second.event(event, event_id="Ev002", retry_num=1))[0] == 200
    await gateway.settle()
    await second.settle()
    assert len(r42_stub.chats) == 1
    assert len(fake_slack.calls_to("chat.postMessage")) == 1
    assert fake_slack.calls_to("chat.postMessage")[0].args["thread_ts"] == event["ts"]


async def test_a_retried_event_is_dropped_before_bolt(
    gateway: Gateway, fake_slack: FakeSlack
) -> None:
    # App Home has no claim of its own: only the HTTP layer's event-id check stops a retry.
    opened = {"type": "app_home_opened", "user": USER, "tab": "home"}
    assert (await gateway.event(opened, event_id="EvHome1"))[0] == 200
    assert (await gateway.event(opened, event_id="EvHome1", retry_num=1))[0] == 200
    await gateway.settle()
    assert len(fake_slack.calls_to("views.publish")) == 1
    assert (await gateway.event(opened, event_id="EvHome2"))[0] == 200  # a new opening
    await gateway.settle()
    assert len(fake_slack.calls_to("views.publish")) == 2
