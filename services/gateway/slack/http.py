"""HTTP mode: an aiohttp server on Bolt's `/slack/events`; bad signatures 401, malformed bodies 400.

The signature is checked before anything is parsed (an unsigned junk body gets 401, not
400), timestamps older than five minutes are refused, and the body is parsed once here so
a malformed payload is a clean 400 instead of an exception inside Bolt.

Events API callbacks and button clicks never answer with content, so they are acked here
and Bolt dispatches them after the 200 (listener matching and argument building are most of
a request's cost; at 100 concurrent requests they decided the ack time). A retried event id
seen by this process is acked and dropped before anything else; the listeners' shared claim
covers retries that reach another replica. Slash commands and modal submissions go through
Bolt before the answer, because their ack carries text or field errors.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from urllib.parse import parse_qs

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier

from services.gateway.core.background import Background
from services.gateway.slack.dedupe import CLAIM_TTL_S, TtlSet

log = logging.getLogger(__name__)

EVENTS_PATH = "/slack/events"
MAX_BODY_BYTES = 1024 * 1024
Headers = dict[str, str | Sequence[str]]
ACK_FIRST = frozenset({"event_callback", "block_actions"})
"""Request types whose ack is always an empty 200 (no listener acks them with content)."""


def classify(body: str, content_type: str) -> tuple[str, str] | None:
    """(type, event id) of a Slack request body; None when it does not parse.

    A JSON object or a form with a JSON `payload` has a `type`; a slash command is a plain
    form with a command and a user ("command"); ssl_check is Slack's probe.
    """
    if "application/json" in content_type:
        try:
            data = json.loads(body)
        except ValueError:
            return None
        return _typed(data)
    try:
        form = parse_qs(body, strict_parsing=True, keep_blank_values=True)
    except ValueError:
        return None
    if "payload" in form:
        try:
            return _typed(json.loads(form["payload"][0]))
        except ValueError:
            return None
    if "command" in form and "user_id" in form:
        return "command", ""
    return ("ssl_check", "") if "ssl_check" in form else None


def _typed(data: object) -> tuple[str, str] | None:
    if not isinstance(data, dict):
        return None
    return str(data.get("type") or ""), str(data.get("event_id") or "")


def well_formed(body: str, content_type: str) -> bool:
    """Whether a Slack request body parses (JSON object, or a form with a JSON `payload`)."""
    return classify(body, content_type) is not None


class SlackHttpServer:
    """Serves the Bolt app on host:port (port 0 picks a free one)."""

    def __init__(
        self,
        app: AsyncApp,
        *,
        signing_secret: str,
        background: Background,
        host: str = "0.0.0.0",
        port: int = 3000,
    ) -> None:
        self._app = app
        self._verifier = SignatureVerifier(signing_secret)
        self._background = background
        self._seen = TtlSet(ttl=CLAIM_TTL_S)
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
        """Verify, validate, then ack and dispatch after, or let Bolt answer (commands, views)."""
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
        kind = classify(body, request.headers.get("Content-Type", ""))
        if kind is None:
            log.warning("refused a malformed Slack request (%d bytes)", len(raw))
            return web.json_response({"error": "malformed payload"}, status=400)
        request_type, event_id = kind
        headers: Headers = dict(request.headers)
        query = request.query_string
        if request_type in ACK_FIRST:
            if event_id and not self._seen.add(event_id):
                log.info("retry of event %s dropped", event_id[:40])
            else:
                self._background.spawn(self._dispatch(body, query, headers), name="slack-event")
            return web.Response(status=200)
        bolt_req = AsyncBoltRequest(body=body, query=query, headers=headers)
        try:
            bolt_resp = await self._app.async_dispatch(bolt_req)
        except Exception:
            log.exception("Bolt failed on a request")
            return web.json_response({"error": "internal error"}, status=500)
        return await to_aiohttp_response(bolt_resp)

    async def _dispatch(self, body: str, query: str, headers: Headers) -> None:
        """Bolt's dispatch of an acked request (its own ack answer goes nowhere)."""
        bolt_resp = await self._app.async_dispatch(
            AsyncBoltRequest(body=body, query=query, headers=headers)
        )
        if bolt_resp.status >= 400:  # 401: its signature went stale while it waited
            log.error("Bolt refused or failed an acked Slack request (%d)", bolt_resp.status)

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
