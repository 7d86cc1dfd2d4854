"""/api/messages with TEAMS_APP_ID set: every request needs a valid Bot Framework JWT.

The refusals run against the real `r42 gateway --teams` process configured through the
environment. Accepting a token needs Microsoft's signing keys; here they come from a local
JWKS server put in front of the SDK's validator, so no request leaves the machine.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt import PyJWKClient
from microsoft_agents.hosting.core.authorization import _entra_issuers
from microsoft_agents.hosting.core.authorization.jwt import JwtTokenValidator
from microsoft_agents.hosting.core.authorization.jwt import jwt_token_validator as jtv

from services.gateway.teams.auth import auth_config, authenticate
from tests.fakes.bot_connector import FakeBotConnector
from tests.services.gateway.teams.activities import personal_message

APP_ID = "3f1c2b4a-9d8e-4f7a-b6c5-1e2d3c4b5a69"
BOTFRAMEWORK_ISSUER = "https://api.botframework.com"
R42 = Path(sys.executable).parent / "r42"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def unsigned(header: dict[str, Any], claims: dict[str, Any]) -> str:
    """A token with any header and claims and a junk signature."""

    def part(data: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    return f"{part(header)}.{part(claims)}.c2lnbmF0dXJl"


def claims(**overrides: Any) -> dict[str, Any]:
    now = int(time.time())
    values = {
        "iss": BOTFRAMEWORK_ISSUER,
        "aud": APP_ID,
        "serviceurl": "http://127.0.0.1/",
        "nbf": now - 10,
        "exp": now + 600,
    }
    values.update(overrides)
    return values


@pytest.fixture
def secured_env(nats_url: str, tmp_path: Path) -> dict[str, str]:
    """The environment of an operator's Teams deployment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("R42_", "TEAMS_", "SLACK_"))}
    env.update(
        NATS_URL=nats_url,
        R42_STORE=f"sqlite:///{tmp_path}/r42.db",
        R42_DATA_DIR=str(tmp_path / "data"),
        R42_LLM="offline",
        R42_LIMITER="off",
        TEAMS_APP_ID=APP_ID,
        TEAMS_APP_PASSWORD="fake-teams-password-do-not-log",
        TEAMS_TENANT_ID="72f988bf-86f1-41af-91ab-2d7cd011db47",
    )
    return env


@pytest.fixture
async def secured(secured_env: dict[str, str], tmp_path: Path) -> AsyncIterator[str]:
    """`r42 gateway --teams` with TEAMS_APP_ID set; its /api/messages URL."""
    port = free_port()
    log = (tmp_path / "gateway.log").open("w")
    proc = await asyncio.create_subprocess_exec(
        str(R42), "gateway", "--teams", "--host", "127.0.0.1", "--port", str(port),
        env=secured_env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as http:
            deadline = time.monotonic() + 60
            while True:
                assert proc.returncode is None, (tmp_path / "gateway.log").read_text()
                try:
                    async with http.get(f"{base}/healthz") as resp:
                        if resp.status == 200:
                            break
                except aiohttp.ClientError:
                    pass
                assert time.monotonic() < deadline, "the Teams gateway did not start"
                await asyncio.sleep(0.2)
        yield f"{base}/api/messages"
    finally:
        proc.terminate()
        await asyncio.wait_for(proc.wait(), 20)
        log.close()
        text = (tmp_path / "gateway.log").read_text()
        assert "fake-teams-password-do-not-log" not in text  # secrets never in logs
        assert "Traceback" not in text


async def post(url: str, activity: dict[str, Any], headers: dict[str, str]) -> int:
    async with (
        aiohttp.ClientSession() as http,
        http.post(url, json=activity, headers=headers) as resp,
    ):
        return resp.status


REFUSED = [
    None,
    "",
    "Bearer not-a-jwt",
    "Bearer ",
    "Basic dXNlcjpwYXNz",
    "Bearer a.b.c",
    "Bearer " + unsigned({"alg": "none", "typ": "JWT"}, claims()),
    "Bearer " + unsigned({"alg": "HS256", "kid": "k1", "typ": "JWT"}, claims()),
    "Bearer " + unsigned({"alg": "RS256", "typ": "JWT"}, claims()),  # no key id
    "Bearer " + unsigned({"alg": "RS256", "kid": ["x"], "typ": "JWT"}, claims()),
]


async def test_requests_without_a_valid_token_are_refused(
    secured: str, connector: FakeBotConnector
) -> None:
    activity = personal_message(connector.url, "Hoe declareer ik reiskosten?")
    connector.add_conversation(activity["conversation"]["id"])
    for authorization in REFUSED:
        headers = {} if authorization is None else {"Authorization": authorization}
        assert await post(secured, activity, headers) == 401, authorization
    invoke = {**activity, "type": "invoke", "name": "adaptiveCard/action"}
    assert await post(secured, invoke, {"Authorization": "Bearer not-a-jwt"}) == 401
    await asyncio.sleep(0.3)
    assert connector.calls == []  # nothing was processed


def test_without_app_id_the_endpoint_only_binds_to_loopback(secured_env: dict[str, str]) -> None:
    env = {k: v for k, v in secured_env.items() if not k.startswith("TEAMS_")}
    done = subprocess.run(
        [str(R42), "gateway", "--teams", "--host", "0.0.0.0", "--port", str(free_port())],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "only binds to loopback" in done.stderr


def test_an_app_id_without_password_is_refused_at_start(secured_env: dict[str, str]) -> None:
    env = {k: v for k, v in secured_env.items() if k != "TEAMS_APP_PASSWORD"}
    done = subprocess.run(
        [str(R42), "gateway", "--teams", "--port", str(free_port())],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "TEAMS_APP_PASSWORD" in done.stderr


# -- accepting a token: signing keys from a local JWKS ------------------------------------


class LocalJwks:
    """A JWKS document on a loopback HTTP server, standing in for Microsoft's key endpoint."""

    def __init__(self, key: rsa.RSAPrivateKey, kid: str) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
        body = json.dumps({"keys": [{**jwk, "kid": kid, "use": "sig", "alg": "RS256"}]}).encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/keys"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def local_keys(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[rsa.RSAPrivateKey, str]]:
    """Our own signing key; the validator fetches the Bot Framework keys from a local JWKS."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    kid = "r42-test-key"
    jwks = LocalJwks(key, kid)
    manager = jtv._JwkClientManager()
    for uri in {_entra_issuers.BOTFRAMEWORK_JWKS_URIS[BOTFRAMEWORK_ISSUER]}:
        manager._cache[uri] = jtv._JwkClientCacheEntry(PyJWKClient(jwks.url), threading.Lock())
    monkeypatch.setattr(JwtTokenValidator, "_jwk_client_manager", manager)
    yield key, kid
    jwks.server.shutdown()


async def test_a_signed_token_for_our_app_is_accepted_and_others_are_not(
    local_keys: tuple[rsa.RSAPrivateKey, str],
) -> None:
    key, kid = local_keys
    config = auth_config(app_id=APP_ID, app_password="x", tenant_id=None)

    def sign(**overrides: Any) -> str:
        return jwt.encode(claims(**overrides), key, algorithm="RS256", headers={"kid": kid})

    accepted = await authenticate(config, f"Bearer {sign()}")
    assert accepted is not None and accepted.get_claim_value("aud") == APP_ID
    assert await authenticate(config, f"Bearer {sign(aud='another-bot')}") is None
    assert await authenticate(config, f"Bearer {sign(exp=int(time.time()) - 3600)}") is None
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = jwt.encode(claims(), other, algorithm="RS256", headers={"kid": kid})
    assert await authenticate(config, f"Bearer {forged}") is None
