"""HTTP mode: an aiohttp server on Bolt's `/slack/events`; bad signatures 401, malformed bodies 400.

The signature is checked before anything is parsed (an unsigned junk body gets 401, not
400), timestamps older than five minutes are refused, and the body is parsed once here so
a malformed payload is a clean 400 instead of an exception inside Bolt.
"""

from __future__ import annotations

import json
import logging
from urllib.parse import parse_qs

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
MAX_BODY_BYTES = 1024 * 1024


def well_formed(body: str, content_type: str) -> bool:
    """Whether a Slack request body parses (JSON object, or a form with a JSON `payload`)."""
    if "application/json" in content_type:
        try:
            return isinstance(json.loads(body), dict)
        except ValueError:
            return False
    try:
        form = parse_qs(body, strict_parsing=True, keep_blank_values=True)
    except ValueError:
        return False
    if "payload" in form:
        try:
            return isinstance(json.loads(form["payload"][0]), dict)
        except ValueError:
            return False
    # Slash commands are plain forms with a command and a user; ssl_check is Slack's probe.
    return ("command" in form and "user_id" in form) or "ssl_check" in form


class SlackHttpServer:
    """Serves the Bolt app on host:port (port 0 picks a free one)."""

    def __init__(
        self, app: AsyncApp, *, signing_secret: str, host: str = "0.0.0.0", port: int = 3000
    ) -> None:
        self._app = app
        self._verifier = SignatureVerifier(signing_secret)
        self.host = host
        self.port = port
        self._runner: web.AppRunner | None = None

    def web_app(self) -> web.Application:
        """The aiohttp application (one POST route plus a health check)."""
        application = web.Application(client_max_size=MAX_BODY_BYTES)
        application.router.add_post(EVENTS_PATH, self.handle)
        application.router.add_get("/healthz", self._health)
        return application

    async def _health(self, _request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def handle(self, request: web.Request) -> web.Response:
        """Verify, validate, then let Bolt dispatch (which returns once the listener acked)."""
        raw = await request.read()
        timestamp = request.headers.get("X-Slack-Request-Timestamp", "")
        signature = request.headers.get("X-Slack-Signature", "")
        try:
            body = raw.decode("utf-8")
        except UnicodeDecodeError:
            body = None
        # is_valid raises on a non-numeric timestamp: check the shape first.
        valid = (
            body is not None
            and timestamp.isdigit()
            and bool(signature)
            and self._verifier.is_valid(body, timestamp, signature)
        )
        if not valid or body is None:
            log.warning("refused a Slack request with an invalid or stale signature")
            return web.json_response({"error": "invalid request"}, status=401)
        if not well_formed(body, request.headers.get("Content-Type", "")):
            log.warning("refused a malformed Slack request (%d bytes)", len(raw))
            return web.json_response({"error": "malformed payload"}, status=400)
        bolt_req = AsyncBoltRequest(
            body=body, query=request.query_string, headers=dict(request.headers)
        )
        try:
            bolt_resp = await self._app.async_dispatch(bolt_req)
        except Exception:
            log.exception("Bolt failed on a request")
            return web.json_response({"error": "internal error"}, status=500)
        return await to_aiohttp_response(bolt_resp)

    async def start(self) -> None:
        """Listen; `self.port` holds the bound port afterwards."""
        self._runner = web.AppRunner(self.web_app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        addresses = self._runner.addresses
        if addresses:
            self.port = int(addresses[0][1])
        log.info("Slack HTTP endpoint on %s:%d%s", self.host, self.port, EVENTS_PATH)

    async def stop(self) -> None:
        """Stop listening."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
