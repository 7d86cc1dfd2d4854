"""How the gateway reaches Slack: Socket Mode (SLACK_APP_TOKEN) or HTTP mode, or not at all."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from shared.config import Settings
from shared.errors import ConfigError
from shared.runtime.service import ServiceContext

if TYPE_CHECKING:
    # Imported where used: a gateway with Slack off never loads the Slack SDK or Bolt.
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
    from slack_sdk.web.async_client import AsyncWebClient

    from services.gateway.slack.gateway import SlackGateway
    from services.gateway.slack.http import SlackHttpServer

log = logging.getLogger(__name__)

DEFAULT_PORT = 3000

type SlackRuntime = SlackHttpServer | AsyncSocketModeHandler


@dataclass(frozen=True)
class Mode:
    """How the gateway reaches Slack."""

    kind: Literal["socket", "http", "off"]
    host: str = "0.0.0.0"
    port: int = DEFAULT_PORT
    reason: str = ""


def choose_mode(
    settings: Settings, *, http: bool = False, port: int | None = None, host: str | None = None
) -> Mode:
    """Socket Mode with an app token, HTTP when asked; off (idle) without a bot token.

    Asked for HTTP mode without a bot token is a mistake, not a console set-up: it refuses.
    """
    if settings.slack_bot_token is None:
        if http:
            raise ConfigError(
                "HTTP mode needs SLACK_BOT_TOKEN (the app's xoxb- bot token) and "
                "SLACK_SIGNING_SECRET"
            )
        return Mode("off", reason="SLACK_BOT_TOKEN is not set")
    if port is not None and not 0 <= port <= 65535:
        raise ConfigError(f"port {port} is out of range (0-65535)")
    if http:
        if settings.slack_signing_secret is None:
            raise ConfigError("HTTP mode needs SLACK_SIGNING_SECRET (request signature checks)")
        return Mode("http", host=host or "0.0.0.0", port=DEFAULT_PORT if port is None else port)
    if settings.slack_app_token is None:
        return Mode(
            "off", reason="SLACK_APP_TOKEN is not set (use `r42 gateway --http` for HTTP mode)"
        )
    return Mode("socket")


def web_client(settings: Settings) -> AsyncWebClient:
    """The Slack Web API client (SLACK_API_BASE_URL points it elsewhere: tests, proxies)."""
    from slack_sdk.web.async_client import AsyncWebClient

    token = settings.slack_bot_token.get_secret_value() if settings.slack_bot_token else None
    base = settings.slack_api_base_url
    if base and not base.endswith("/"):
        base += "/"
    return AsyncWebClient(token=token, base_url=base or AsyncWebClient.BASE_URL)


async def build_gateway(ctx: ServiceContext, *, pace_interval: float = 1.0) -> SlackGateway:
    """The Slack gateway over this service's broker and store."""
    from services.gateway.core import GatewayClient
    from services.gateway.slack.api import SlackApi
    from services.gateway.slack.dedupe import Deduper, open_claims
    from services.gateway.slack.gateway import SlackGateway

    settings = ctx.settings
    client = web_client(settings)
    claims = await open_claims(ctx.broker, namespace=ctx.namespace, replicas=settings.nats_replicas)
    return SlackGateway(
        client=GatewayClient(
            broker=ctx.broker, store=ctx.store, settings=settings, namespace=ctx.namespace
        ),
        api=SlackApi(client, pace_interval=pace_interval),
        deduper=Deduper(kv=claims),
        admin_channel=settings.admin_channel,
    )


async def connect_slack(ctx: ServiceContext, gw: SlackGateway, *, mode: Mode) -> SlackRuntime:
    """Build the Bolt app over `gw` and connect it; stopping is registered on ctx.closers."""
    from services.gateway.slack.app import build_app
    from services.gateway.slack.http import SlackHttpServer

    settings = ctx.settings
    secret = (
        settings.slack_signing_secret.get_secret_value() if settings.slack_signing_secret else ""
    )
    app = build_app(gw, client=gw.api.client, signing_secret=secret, http=mode.kind == "http")
    ctx.closers.append(lambda: gw.background.drain(timeout=10.0))
    if mode.kind == "http":
        server = SlackHttpServer(
            app, signing_secret=secret, background=gw.background, host=mode.host, port=mode.port
        )
        await server.start()
        ctx.closers.append(server.stop)
        return server
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

    assert settings.slack_app_token is not None  # choose_mode guarantees it
    handler = AsyncSocketModeHandler(app, settings.slack_app_token.get_secret_value())
    await handler.connect_async()  # type: ignore[no-untyped-call]  # bolt leaves it unannotated
    ctx.closers.append(handler.close_async)
    log.info("connected to Slack in Socket Mode")
    return handler
