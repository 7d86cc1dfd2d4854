"""Test harness: the gateway service in-process (HTTP mode) against the fake Slack, with signing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import nats
from slack_sdk.signature import SignatureVerifier

from services.extractor.objects import SourceObjects
from services.extractor.uploads import register_staged
from services.gateway.app import GatewayDeps, build
from services.gateway.slack.dedupe import bucket_name
from services.gateway.slack.gateway import SlackGateway
from services.gateway.slack.http import SlackHttpServer
from services.gateway.slack.service import Mode
from services.quiz.stop import answer_stop
from services.quiz.week import answer_leaderboard, answer_status
from shared.bus import STREAMS, Event, parse_event, subscriptions_settled
from shared.bus.extractor_rpc import (
    REGISTER_UPLOAD_SUBJECT,
    RegisterUploadReply,
    RegisterUploadRequest,
)
from shared.bus.quiz_rpc import (
    LEADERBOARD_SUBJECT,
    QUIZ_STATUS_SUBJECT,
    QUIZ_STOP_SUBJECT,
    LeaderboardReply,
    LeaderboardRequest,
    QuizStatusReply,
    QuizStatusRequest,
    QuizStopReply,
    QuizStopRequest,
)
from shared.bus.subjects import ns_stream, ns_subject
from shared.config import Settings, build_settings
from shared.runtime.service import (
    Rpc,
    ServiceContext,
    ServiceSpec,
    Subscription,
    start_service,
    stop_service,
)
from tests.fakes.fixtures import FAKE_SLACK_BOT_TOKEN, FAKE_SLACK_SIGNING_SECRET
from tests.fakes.slack_server import FakeSlack

ADMIN = "UADMIN1"
USER = "UUSER1"
ADMIN_CHANNEL = "CADMINS"


def gateway_settings(
    *, nats_url: str, tmp_path: Path, fake: FakeSlack, **overrides: Any
) -> Settings:
    """Settings for a gateway (and its neighbours) on the session's NATS and a temp SQLite."""
    values: dict[str, Any] = {
        "nats_url": nats_url,
        "store": f"sqlite:///{tmp_path}/r42.db",
        "data_dir": tmp_path / "data",
        "llm": "offline",
        "limiter": "off",
        "slack_bot_token": FAKE_SLACK_BOT_TOKEN,
        "slack_signing_secret": FAKE_SLACK_SIGNING_SECRET,
        "slack_api_base_url": fake.base_url,
        "admins": [ADMIN],
        "admin_channel": ADMIN_CHANNEL,
    }
    values.update(overrides)
    return build_settings(**values)


def sign(
    body: str,
    *,
    timestamp: int | None = None,
    secret: str = FAKE_SLACK_SIGNING_SECRET,
) -> dict[str, str]:
    """Slack's signature headers for a body."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    signature = SignatureVerifier(secret).generate_signature(timestamp=ts, body=body)
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": signature}


@dataclass
class Gateway:
    """A running gateway: its context, URL and the fake Slack it talks to."""

    ctx: ServiceContext
    url: str
    fake: FakeSlack
    http: aiohttp.ClientSession
    others: list[ServiceContext] = field(default_factory=list)

    @property
    def gw(self) -> SlackGateway:
        """The SlackGateway object."""
        return gateway_deps(self.ctx).current()

    @property
    def namespace(self) -> str:
        """The bus namespace of this test."""
        return self.ctx.namespace

    async def raw(self, body: str, headers: dict[str, str]) -> tuple[int, str]:
        """POST a body to /slack/events; (status, text)."""
        async with self.http.post(self.url, data=body.encode(), headers=headers) as resp:
            return resp.status, await resp.text()

    async def send_form(self, form: dict[str, str], **extra_headers: str) -> tuple[int, str]:
        """A signed form post (slash commands, interactivity)."""
        body = urlencode(form)
        headers = {"Content-Type": "application/x-www-form-urlencoded", **sign(body)}
        return await self.raw(body, {**headers, **extra_headers})

    async def command(
        self, command: str, text: str = "", *, user: str = USER, channel: str = "C0PUBLIC"
    ) -> tuple[int, str]:
        """A signed slash command."""
        return await self.send_form(
            {
                "command": command,
                "text": text,
                "user_id": user,
                "user_name": user.lower(),
                "channel_id": channel,
                "team_id": "T0FAKE",
                "trigger_id": "trig-1",
                "response_url": self.fake.response_url(f"{command.strip('/')}-{user}"),
            }
        )

    async def event(
        self, event: dict[str, Any], *, event_id: str, retry_num: int | None = None
    ) -> tuple[int, str]:
        """A signed Events API callback (optionally marked as Slack's retry)."""
        body = json.dumps(
            {
                "type": "event_callback",
                "team_id": "T0FAKE",
                "api_app_id": "A0FAKE",
                "event_id": event_id,
                "event_time": int(time.time()),
                "event": event,
            }
        )
        headers = {"Content-Type": "application/json", **sign(body)}
        if retry_num is not None:
            headers.update(
                {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"}
            )
        return await self.raw(body, headers)

    async def action(
        self,
        action_id: str,
        value: str,
        *,
        user: str = USER,
        channel: str = "D0USER1",
        message_ts: str = "1700000001.000100",
        blocks: list[dict[str, Any]] | None = None,
        ephemeral: bool = False,
        action_type: str = "button",
        state: dict[str, Any] | None = None,
    ) -> tuple[int, str]:
        """A signed block_actions click (an ephemeral message's click carries no `message`).

        `state` is the message's stateful inputs as Slack sends them ({"values": {block:
        {action: {"type": "checkboxes", "selected_options": [...]}}}}).
        """
        payload: dict[str, Any] = {
            "type": "block_actions",
            "team": {"id": "T0FAKE"},
            "user": {"id": user, "username": user.lower()},
            "container": {
                "type": "message",
                "channel_id": channel,
                "message_ts": message_ts,
                "is_ephemeral": ephemeral,
            },
            "channel": {"id": channel},
            "trigger_id": "trig-2",
            "response_url": self.fake.response_url(f"action-{user}"),
            "actions": [
                {
                    "action_id": action_id,
                    "block_id": "b1",
                    "value": value,
                    "type": action_type,
                    "action_ts": str(time.time()),
                }
            ],
        }
        if not ephemeral:
            payload["message"] = {"ts": message_ts, "blocks": blocks or []}
        if state is not None:
            payload["state"] = state
        return await self.send_form({"payload": json.dumps(payload)})

    async def view(
        self,
        callback_id: str,
        values: dict[str, dict[str, str]],
        *,
        user: str = USER,
        private_metadata: str = "",
        checked: dict[str, dict[str, list[str]]] | None = None,
    ) -> tuple[int, str]:
        """A signed view_submission: plain-text values {block: {action: value}}, checkboxes."""
        state: dict[str, dict[str, Any]] = {
            b: {a: {"type": "plain_text_input", "value": v} for a, v in acts.items()}
            for b, acts in values.items()
        }
        for block, acts in (checked or {}).items():
            state.setdefault(block, {}).update(
                {
                    a: {"type": "checkboxes", "selected_options": [{"value": v} for v in chosen]}
                    for a, chosen in acts.items()
                }
            )
        payload = {
            "type": "view_submission",
            "team": {"id": "T0FAKE"},
            "user": {"id": user},
            "trigger_id": "trig-3",
            "view": {
                "id": "V1",
                "type": "modal",
                "callback_id": callback_id,
                "private_metadata": private_metadata,
                "state": {"values": state},
            },
        }
        return await self.send_form({"payload": json.dumps(payload)})

    async def settle(self, timeout: float = 15.0) -> None:  # noqa: ASYNC109
        """Wait until the gateway's background work is done."""
        await self.gw.background.drain(timeout=timeout)


async def start_gateway(settings: Settings, *, fake: FakeSlack, namespace: str) -> Gateway:
    """The gateway service in HTTP mode on a free loopback port, without pacing."""
    mode = Mode("http", host="127.0.0.1", port=0)
    ctx = await start_service(
        "gateway",
        build=partial(build, mode=mode, pace_interval=0),
        settings=settings,
        namespace=namespace,
    )
    server = gateway_deps(ctx).runtime
    assert isinstance(server, SlackHttpServer)
    http = aiohttp.ClientSession()
    ctx.closers.insert(0, http.close)
    owners = await start_owners(settings, namespace=namespace)
    return Gateway(
        ctx=ctx,
        url=f"http://127.0.0.1:{server.port}/slack/events",
        fake=fake,
        http=http,
        others=[owners],
    )


def build_owners(ctx: ServiceContext) -> ServiceSpec[None]:
    """The quiz and extractor rpcs the gateway asks, served by those services' own functions."""

    async def status(req: QuizStatusRequest) -> QuizStatusReply:
        return await answer_status(req, store=ctx.store)

    async def board(req: LeaderboardRequest) -> LeaderboardReply:
        return await answer_leaderboard(req, store=ctx.store)

    async def stop(req: QuizStopRequest) -> QuizStopReply:
        return await answer_stop(req, store=ctx.store)

    async def publish(event: Event) -> None:
        await ctx.publish(event)

    async def register(req: RegisterUploadRequest) -> RegisterUploadReply:
        return await register_staged(
            ctx.store, req, objects=SourceObjects(ctx.broker, ctx.settings.max_upload_bytes),
            max_bytes=ctx.settings.max_upload_bytes, publish=publish,
        )  # fmt: skip

    return ServiceSpec(
        deps=None,
        rpc=[
            Rpc(QUIZ_STATUS_SUBJECT, QuizStatusRequest, status),
            Rpc(LEADERBOARD_SUBJECT, LeaderboardRequest, board),
            Rpc(QUIZ_STOP_SUBJECT, QuizStopRequest, stop),
            Rpc(REGISTER_UPLOAD_SUBJECT, RegisterUploadRequest, register),
        ],
    )


async def start_owners(settings: Settings, *, namespace: str) -> ServiceContext:
    """The rule owners' rpcs (quiz week and leaderboard, upload registration) on the test bus."""
    return await start_service("owners", build=build_owners, settings=settings, namespace=namespace)


def gateway_deps(ctx: ServiceContext) -> GatewayDeps:
    """The gateway service's dependencies (its Slack gateway and runtime once connected)."""
    assert ctx.spec is not None and isinstance(ctx.spec.deps, GatewayDeps)
    return ctx.spec.deps


async def start_stub(
    name: str,
    settings: Settings,
    *,
    namespace: str,
    subscriptions: Sequence[Subscription] = (),
    rpc: Sequence[Rpc] = (),
) -> ServiceContext:
    """A stand-in service on the real bus (for services not under test)."""

    def build_stub(_ctx: ServiceContext) -> ServiceSpec[None]:
        return ServiceSpec(deps=None, subscriptions=subscriptions, rpc=rpc)

    return await start_service(name, build=build_stub, settings=settings, namespace=namespace)


async def drop_namespace(url: str, namespace: str) -> None:
    """Delete a test namespace's streams and the gateway's claims bucket (they reserve disk)."""
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        for spec in STREAMS:
            with contextlib.suppress(Exception):
                await js.delete_stream(ns_stream(spec.name, namespace))
        with contextlib.suppress(Exception):
            await js.delete_key_value(bucket_name(namespace))
    finally:
        await nc.close()


async def stop_all(*contexts: ServiceContext) -> None:
    """Stop services (in the given order), then drop their namespaces' streams."""
    for ctx in contexts:
        await stop_service(ctx)
    for ns in {(ctx.nats_url, ctx.namespace) for ctx in contexts if ctx.namespace}:
        await drop_namespace(*ns)


class Tap:
    """A core-NATS tap recording every event published on some subjects."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def of(self, cls: type[Event]) -> list[Any]:
        """The recorded events of one class."""
        return [e for e in self.events if type(e) is cls]

    async def wait(
        self,
        cls: type[Event],
        count: int = 1,
        timeout: float = 15.0,  # noqa: ASYNC109 - a polling deadline
    ) -> list[Any]:
        """Wait until `count` events of `cls` were seen."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while len(self.of(cls)) < count:
            if loop.time() > deadline:
                raise AssertionError(f"{count} x {cls.__name__} not seen; saw {self.events}")
            await asyncio.sleep(0.02)
        return self.of(cls)


async def make_tap(gateway: Gateway) -> Tap:
    """A tap on every event subject of the gateway's namespace (subscribed before returning)."""
    recorder = Tap()
    ns = gateway.namespace
    nc = gateway.ctx.broker.connection

    async def on_msg(msg: Any) -> None:
        try:
            recorder.events.append(parse_event(msg.subject, msg.data, namespace=ns))
        except Exception:  # rpc replies and other traffic are not events
            return

    for first in ("source", "kb", "content", "quiz"):
        await nc.subscribe(ns_subject(f"{first}.>", ns), cb=on_msg)
    await subscriptions_settled(nc)
    return recorder
