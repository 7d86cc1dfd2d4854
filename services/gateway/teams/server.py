"""The HTTP endpoint: POST /api/messages through the SDK's CloudAdapter, behind our JWT check."""

from __future__ import annotations

import logging

from aiohttp import web
from microsoft_agents.hosting.aiohttp import CloudAdapter
from microsoft_agents.hosting.core import AgentAuthConfiguration
from pydantic import ValidationError

from services.gateway.teams.auth import jwt_middleware
from services.gateway.teams.bot import R42TeamsBot

log = logging.getLogger(__name__)

MAX_BODY = 1024 * 1024


class TeamsHttpServer:
    """aiohttp app serving /api/messages (and /healthz) on one host and port."""

    def __init__(
        self,
        *,
        adapter: CloudAdapter,
        bot: R42TeamsBot,
        config: AgentAuthConfiguration,
        host: str,
        port: int,
    ) -> None:
        self.adapter = adapter
        self.bot = bot
        self.host = host
        self.port = port
        self.app = web.Application(middlewares=[jwt_middleware(config)], client_max_size=MAX_BODY)
        self.app.router.add_post("/api/messages", self._messages)
        self.app.router.add_get("/healthz", self._health)
        self._runner: web.AppRunner | None = None

    async def _messages(self, request: web.Request) -> web.StreamResponse:
        if request.content_type != "application/json":
            return web.json_response({"error": "expected application/json"}, status=415)
        try:
            response = await self.adapter.process(request, self.bot)
        except ValidationError as exc:  # the SDK lets a malformed activity escape as a 500
            log.warning("malformed activity refused: %d error(s)", exc.error_count())
            return web.json_response({"error": "malformed activity"}, status=400)
        return response or web.Response(status=202)

    async def _health(self, _request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    async def start(self) -> None:
        """Bind and serve (port 0 picks a free one; `port` is updated)."""
        self._runner = web.AppRunner(self.app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []
        if sockets:
            self.port = sockets[0].getsockname()[1]
        log.info("Teams endpoint on http://%s:%d/api/messages", self.host, self.port)

    async def stop(self) -> None:
        """Stop serving."""
        if self._runner is not None:
            await self._runner.cleanup()
