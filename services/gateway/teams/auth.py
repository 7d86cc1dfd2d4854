"""Who may post to /api/messages: a Bot Framework JWT for our app id, or anyone on loopback.

With TEAMS_APP_ID set every request must carry `Authorization: Bearer <jwt>` that the SDK's
JwtTokenValidator accepts (signature from Microsoft's published keys, audience = our app
id). Anything else — no header, another scheme, a malformed or forged token, a validator
error of any kind — is a 401 and the activity is never parsed. The SDK's own middleware
lets some malformed tokens escape as exceptions (500); this one answers 401 for all of them.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

import jwt
from aiohttp import web
from microsoft_agents.hosting.core import AgentAuthConfiguration, ClaimsIdentity
from microsoft_agents.hosting.core.authorization.jwt import JwtTokenValidator

log = logging.getLogger(__name__)

CLAIMS_KEY = "claims_identity"
"""Where the SDK's aiohttp request adapter looks for the caller's identity."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def auth_config(
    *, app_id: str | None, app_password: str | None, tenant_id: str | None
) -> AgentAuthConfiguration:
    """The SDK's auth configuration: our app registration, or anonymous without an app id."""
    if not app_id:
        return AgentAuthConfiguration(anonymous_allowed=True)
    return AgentAuthConfiguration(
        client_id=app_id, client_secret=app_password, tenant_id=tenant_id, anonymous_allowed=False
    )


def _unauthorized(reason: str) -> web.Response:
    log.warning("refused /api/messages: %s", reason)
    return web.json_response({"error": "Unauthorized"}, status=401)


def _bearer(header: str | None) -> str | None:
    parts = (header or "").split()
    if len(parts) != 2 or parts[0].lower() != "bearer":
        return None
    return parts[1]


async def authenticate(config: AgentAuthConfiguration, header: str | None) -> ClaimsIdentity | None:
    """The caller's claims, or None when the request must be refused."""
    if config.ANONYMOUS_ALLOWED:
        return ClaimsIdentity()
    token = _bearer(header)
    if token is None:
        return None
    try:
        # Checked before the validator: it would fetch signing keys for any kid first.
        head = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        return None
    if head.get("alg") != "RS256" or not isinstance(head.get("kid"), str):
        return None
    try:
        return await JwtTokenValidator(config).validate_token(token)
    except Exception as exc:  # any validator failure is a refusal, never a 500
        log.info("token refused (%s)", type(exc).__name__)
        return None


def jwt_middleware(config: AgentAuthConfiguration) -> Any:
    """aiohttp middleware guarding every route but the health check."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path == "/healthz":
            return await handler(request)
        claims = await authenticate(config, request.headers.get("Authorization"))
        if claims is None:
            return _unauthorized("missing or invalid bearer token")
        with warnings.catch_warnings():  # the SDK's request adapter reads this plain str key
            warnings.simplefilter("ignore", web.NotAppKeyWarning)
            request[CLAIMS_KEY] = claims
        return await handler(request)

    return middleware
