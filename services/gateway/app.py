"""Wiring of the gateway service: the Slack-posting consumers, then Slack itself.

Without a bot token the gateway idles (the console in `r42 up` is the interface then) so
the supervisor does not restart it in a loop. The host starts the consumers before the
`on_started` step connects Slack, so an event that arrives first waits for the connection
(the consumer keeps its delivery alive) instead of failing and being redelivered.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from services.gateway.slack.service import Mode, SlackRuntime, choose_mode
from shared.errors import TransientError
from shared.runtime.service import ServiceContext, ServiceSpec, Subscription

if TYPE_CHECKING:
    from services.gateway.slack.gateway import SlackGateway

log = logging.getLogger(__name__)

CONNECT_WAIT_S = 20.0
"""How long an early event waits for Slack (below the consumers' 30 s ack wait)."""


@dataclass
class GatewayDeps:
    """How the gateway reaches Slack, and once connected, the gateway and its runtime."""

    mode: Mode
    gateway: SlackGateway | None = None
    runtime: SlackRuntime | None = None
    connected: asyncio.Event = field(default_factory=asyncio.Event)

    def current(self) -> SlackGateway:
        """The connected gateway; events before Slack is connected are redelivered shortly."""
        if self.gateway is None:
            raise TransientError("the Slack gateway is still starting")
        return self.gateway

    async def until_connected(self) -> None:
        """Wait for Slack to be connected; TransientError (redeliver) if it takes too long."""
        try:
            await asyncio.wait_for(self.connected.wait(), CONNECT_WAIT_S)
        except TimeoutError:
            raise TransientError("the Slack gateway is still starting") from None


def after_connect(deps: GatewayDeps, sub: Subscription) -> Subscription:
    """The subscription, its handler first waiting for the Slack connection."""
    handler: Callable[[Any], Awaitable[None]] = sub.handler

    async def handle(event: Any) -> None:
        await deps.until_connected()
        await handler(event)

    return replace(sub, handler=handle)


def build(
    ctx: ServiceContext, *, mode: Mode | None = None, pace_interval: float = 1.0
) -> ServiceSpec[GatewayDeps]:
    """Slack consumers and the Slack connection (the CLI passes the mode it chose)."""
    deps = GatewayDeps(mode=mode or choose_mode(ctx.settings))
    if deps.mode.kind == "off":

        async def idle() -> None:
            log.info("Slack is off (%s); the gateway idles", deps.mode.reason)

        return ServiceSpec(deps=deps, on_started=[idle])
    # Only now: with Slack off the gateway never loads the Slack SDK or Bolt.
    from services.gateway.slack.handlers import slack_subscriptions
    from services.gateway.slack.service import build_gateway, connect_slack

    async def connect() -> None:
        deps.gateway = await build_gateway(ctx, pace_interval=pace_interval)
        deps.runtime = await connect_slack(ctx, deps.gateway, mode=deps.mode)
        deps.connected.set()

    subscriptions = [after_connect(deps, sub) for sub in slack_subscriptions(deps.current)]
    return ServiceSpec(deps=deps, subscriptions=subscriptions, on_started=[connect])
