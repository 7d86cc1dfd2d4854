"""Gateway parts: pacing, dedupe claims on NATS KV, mode choice, text checks, event parsing."""

from __future__ import annotations

import asyncio
from urllib.parse import quote

import pytest

from services.gateway.core.quiz import parse_question
from services.gateway.slack.api import ChannelPacer
from services.gateway.slack.blocks.quiz import parse_answer_value
from services.gateway.slack.dedupe import Deduper, TtlSet, open_claims
from services.gateway.slack.flows.learn import PNG_SIGNATURE, stored_png
from services.gateway.slack.http import ACK_FIRST, classify, well_formed
from services.gateway.slack.service import Mode, choose_mode
from shared.bus import build_broker, start_broker
from shared.config import build_settings
from shared.errors import BadInputError, ConfigError
from tests.services.gateway.harness import drop_namespace


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)


async def test_pacer_spaces_posts_per_channel() -> None:
    clock = FakeClock()
    pacer = ChannelPacer(1.0, clock=clock, sleep=clock.sleep)
    await asyncio.gather(*(pacer.wait("C1") for _ in range(3)), pacer.wait("C2"))
    # Three posts to C1 at the same moment wait 0, 1 and 2 s; C2 is not held up by C1.
    assert sorted(clock.sleeps) == [1.0, 2.0]
    clock.now += 10
    await pacer.wait("C1")
    assert len(clock.sleeps) == 2  # the channel was quiet long enough: no wait


def test_ttl_set_expires_and_stays_bounded() -> None:
    clock = FakeClock()
    seen = TtlSet(ttl=60, max_items=3, clock=clock)
    assert seen.add("a") and not seen.add("a")
    clock.now += 61
    assert seen.add("a")  # expired, so new again
    for key in "bcd":
        seen.add(key)
    assert len(seen) == 3 and seen.add("a")  # the oldest was evicted to stay bounded


async def test_claims_are_shared_between_replicas(nats_url: str, unique: str) -> None:
    ns = f"d{unique}"
    brokers = [build_broker(nats_url, name=f"r42-test-{i}") for i in range(2)]
    try:
        for broker in brokers:
            await start_broker(broker, namespace=ns, streams=None)
        one, two = [Deduper(kv=await open_claims(b, namespace=ns)) for b in brokers]
        results = await asyncio.gather(*(d.claim("Ev123") for d in (one, two, one, two)))
        assert sorted(results) == [False, False, False, True]
        assert await one.claim("Ev124") and not await two.claim("Ev124")
        assert await Deduper().claim("local-only")
    finally:
        for broker in brokers:
            await broker.stop()
        await drop_namespace(nats_url, ns)


def test_choose_mode() -> None:
    assert choose_mode(build_settings()).kind == "off"
    with pytest.raises(ConfigError, match="SLACK_BOT_TOKEN"):
        choose_mode(build_settings(), http=True)
    socket = build_settings(slack_bot_token="xoxb-1", slack_app_token="xapp-1")
    assert choose_mode(socket) == Mode("socket")
    http = build_settings(slack_bot_token="xoxb-1", slack_signing_secret="s")
    assert choose_mode(http, http=True, port=8080) == Mode("http", port=8080)
    assert choose_mode(http).kind == "off"  # no app token and no --http
    with pytest.raises(ConfigError, match="SIGNING_SECRET"):
        choose_mode(build_settings(slack_bot_token="xoxb-1"), http=True)
    with pytest.raises(ConfigError, match="port"):
        choose_mode(http, http=True, port=70000)


def test_well_formed_bodies() -> None:
    assert well_formed('{"type": "event_callback"}', "application/json")
    assert not well_formed("[1]", "application/json")
    assert well_formed(
        "payload=%7B%22type%22%3A%22block_actions%22%7D", "application/x-www-form-urlencoded"
    )
    assert not well_formed("payload=nope", "application/x-www-form-urlencoded")
    assert well_formed("command=%2Fquiz&user_id=U1&text=", "application/x-www-form-urlencoded")
    assert not well_formed("hello", "application/x-www-form-urlencoded")
    assert well_formed("ssl_check=1&token=x", "application/x-www-form-urlencoded")


def test_quiz_payload_parsing() -> None:
    q = parse_question({"index": 2, "count": 10, "text": "Wat?", "options": ["a", "b", "c", "d"]})
    assert (q.index, q.count, q.options) == (2, 10, ("a", "b", "c", "d"))
    assert parse_question({"question": "Wat?", "choices": ["a", "b"]}, count=5).count == 5
    for bad in (
        None,
        {"text": "", "options": ["a", "b"]},
        {"text": "x", "options": ["a"]},
        {"text": "x", "options": ["a", "b"], "index": -1},
    ):
        with pytest.raises(BadInputError):
            parse_question(bad)
    assert parse_answer_value('{"a":"att","q":3,"c":1}') == ("att", 3, 1)
    for bad in ("", "{", '{"a":"","q":0,"c":0}', '{"a":"x","q":-1,"c":0}', '{"a":"x","q":0,"c":9}'):
        assert parse_answer_value(bad) is None


def test_stored_png() -> None:
    import base64

    png = PNG_SIGNATURE + b"rest"
    assert stored_png({"image": {"base64": base64.b64encode(png).decode()}}) == png
    assert stored_png({"image": {"base64": base64.b64encode(b"GIF89a").decode()}}) is None
    assert stored_png({"image": {"base64": "not base64!"}}) is None
    assert stored_png({}) is None


def test_classify_reads_type_and_event_id_once() -> None:
    event = '{"type": "event_callback", "event_id": "Ev1", "event": {"type": "app_mention"}}'
    assert classify(event, "application/json") == ("event_callback", "Ev1")
    click = "payload=" + quote('{"type": "block_actions", "actions": []}')
    assert classify(click, "application/x-www-form-urlencoded") == ("block_actions", "")
    command = "command=%2Fquiz&user_id=U1&text="
    assert classify(command, "application/x-www-form-urlencoded") == ("command", "")
    assert classify('{"type": "url_verification"}', "application/json")[0] not in ACK_FIRST
    assert classify("[1]", "application/json") is None
