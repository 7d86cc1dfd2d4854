"""Wiring of the gateway service: the Slack-posting consumers, then Slack itself.

Without a bot token the gateway idles (the console in `r42 up` is the interface then) so
the supervisor does not restart it in a loop.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from services.gateway.slack.service import Mode, SlackRuntime, choose_mode
from shared.errors import TransientError
from shared.runtime.service import ServiceContext, ServiceSpec

if TYPE_CHECKING:
    from services.gateway.slack.gateway import SlackGateway

log = logging.getLogger(__name__)


@dataclass
class GatewayDeps:
    """How the gateway reaches Slack, and once connected, the gateway and its runtime."""

    mode: Mode
    gateway: SlackGateway | None = None
    runtime: SlackRuntime | None = None

    def current(self) -> SlackGateway:
        """The connected gateway; events before Slack is connected are redelivered shortly."""
        if self.gateway is None:
            raise TransientError("the Slack gateway is still starting")
        return self.gateway


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

    return ServiceSpec(
        deps=deps, subscriptions=slack_subscriptions(deps.current), on_started=[connect]
    )
