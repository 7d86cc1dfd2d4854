"""Teams gateway wiring: the SDK adapter, the bot, the HTTP endpoint and the bus consumers.

Without TEAMS_APP_ID the endpoint is anonymous (local development with the Bot Framework
Emulator or Teams' dev tunnel tooling) and is bound to loopback only, with a warning.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from microsoft_agents.hosting.aiohttp import CloudAdapter

from services.gateway.teams.auth import auth_config
from services.gateway.teams.bot import R42TeamsBot
from services.gateway.teams.clients import ProactiveOnlyClients
from services.gateway.teams.core import GatewayClient
from services.gateway.teams.dedupe import ActivityClaims, open_claims
from services.gateway.teams.handlers import teams_subscriptions
from services.gateway.teams.refs import ConversationRefs
from services.gateway.teams.sender import TeamsSender
from services.gateway.teams.server import TeamsHttpServer
from services.gateway.teams.surface import TeamsGateway
from shared.config import Settings
from shared.errors import ConfigError, TransientError
from shared.runtime.service import ServiceContext, ServiceSpec

log = logging.getLogger(__name__)

DEFAULT_PORT = 3978
LOOPBACK = "127.0.0.1"


@dataclass(frozen=True)
class TeamsMode:
    """Where the endpoint listens and whether callers must authenticate."""

    host: str
    port: int
    app_id: str | None


def choose_teams_mode(
    settings: Settings, *, port: int | None = None, host: str | None = None
) -> TeamsMode:
    """Authenticated on any address with TEAMS_APP_ID; anonymous on loopback only without it."""
    if port is not None and not 0 <= port <= 65535:
        raise ConfigError(f"port {port} is out of range (0-65535)")
    port = DEFAULT_PORT if port is None else port
    if not settings.teams_app_id:
        if host not in (None, LOOPBACK, "localhost"):
            raise ConfigError(
                "without TEAMS_APP_ID the Teams endpoint is anonymous and only binds to loopback"
            )
        log.warning(
            "TEAMS_APP_ID is not set: /api/messages accepts anonymous requests on %s only", LOOPBACK
        )
        return TeamsMode(host=LOOPBACK, port=port, app_id=None)
    if settings.teams_app_password is None:
        raise ConfigError("TEAMS_APP_ID is set but TEAMS_APP_PASSWORD is not (replies need it)")
    return TeamsMode(host=host or "0.0.0.0", port=port, app_id=settings.teams_app_id)


def build_adapter(settings: Settings, mode: TeamsMode) -> tuple[CloudAdapter, Any]:
    """The SDK's CloudAdapter with a connection for our app registration (or none: anonymous)."""
    from microsoft_agents.authentication.msal import MsalConnectionManager

    password = (
        settings.teams_app_password.get_secret_value() if settings.teams_app_password else None
    )
    config = auth_config(
        app_id=mode.app_id, app_password=password, tenant_id=settings.teams_tenant_id
    )
    connections = MsalConnectionManager(connections_configurations={"SERVICE_CONNECTION": config})
    clients = ProactiveOnlyClients(connections)
    adapter = CloudAdapter(channel_service_client_factory=clients)
    adapter.r42_clients = clients  # type: ignore[attr-defined]  # closed at shutdown
    return adapter, config


@dataclass
class TeamsDeps:
    """Where the endpoint listens, and once it is up, the gateway and its HTTP server."""

    mode: TeamsMode
    gateway: TeamsGateway | None = None
    server: TeamsHttpServer | None = None

    def current(self) -> TeamsGateway:
        """The running gateway; events before the endpoint is up are redelivered shortly."""
        if self.gateway is None:
            raise TransientError("the Teams gateway is still starting")
        return self.gateway


async def start_teams(ctx: ServiceContext, deps: TeamsDeps) -> TeamsHttpServer:
    """Build the Teams gateway and serve /api/messages; stopping is registered on ctx.closers."""
    mode = deps.mode
    adapter, config = build_adapter(ctx.settings, mode)
    gw = TeamsGateway(
        client=GatewayClient(
            broker=ctx.broker, store=ctx.store, settings=ctx.settings, namespace=ctx.namespace
        ),
        sender=TeamsSender(adapter, app_id=mode.app_id),
        refs=ConversationRefs(ctx.store),
        claims=ActivityClaims(
            kv=await open_claims(
                ctx.broker, namespace=ctx.namespace, replicas=ctx.settings.nats_replicas
            )
        ),
    )
    server = TeamsHttpServer(
        adapter=adapter, bot=R42TeamsBot(gw), config=config, host=mode.host, port=mode.port
    )
    await server.start()
    deps.gateway, deps.server = gw, server
    ctx.closers.append(adapter.r42_clients.aclose)  # type: ignore[attr-defined]
    ctx.closers.append(server.stop)
    ctx.closers.append(lambda: gw.background.drain(timeout=10.0))
    return server


def build(ctx: ServiceContext, *, mode: TeamsMode | None = None) -> ServiceSpec[TeamsDeps]:
    """The Teams consumers, then the endpoint (the CLI passes the mode it chose)."""
    deps = TeamsDeps(mode=mode or choose_teams_mode(ctx.settings))

    async def serve() -> None:
        await start_teams(ctx, deps)

    return ServiceSpec(deps=deps, subscriptions=teams_subscriptions(deps.current),
                       on_started=[serve])  # fmt: skip
