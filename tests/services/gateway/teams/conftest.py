"""Fixtures: the Teams gateway in-process (anonymous, loopback) against the fake Bot Connector."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from services.gateway.teams.app import TeamsDeps, build, choose_teams_mode
from services.gateway.teams.surface import TeamsGateway
from shared.bus import (
    CHAT_SUBJECT,
    CLEAR_SUBJECT,
    PROPOSAL_SUBJECT,
    ChatRequest,
    ClearRequest,
    ProposalDecisionRequest,
    serve_rpc,
)
from shared.config import build_settings
from shared.runtime.service import ServiceContext, start_service
from tests.fakes.bot_connector import FakeBotConnector
from tests.services.gateway.conftest import R42Stub
from tests.services.gateway.harness import start_owners, stop_all
from tests.services.gateway.teams.activities import ADMIN_AAD, personal_conversation
from tests.services.gateway.teams.card_schema import assert_valid_card


def teams_deps(ctx: ServiceContext) -> TeamsDeps:
    """The Teams gateway service's dependencies (its gateway and server once serving)."""
    assert ctx.spec is not None and isinstance(ctx.spec.deps, TeamsDeps)
    return ctx.spec.deps


@dataclass
class Teams:
    """A running Teams gateway, its endpoint and the fake connector it replies to."""

    ctx: ServiceContext
    url: str
    connector: FakeBotConnector
    http: aiohttp.ClientSession

    @property
    def gw(self) -> TeamsGateway:
        """The TeamsGateway object."""
        return teams_deps(self.ctx).current()

    @property
    def namespace(self) -> str:
        """The test's bus namespace."""
        return self.ctx.namespace

    async def post(self, activity: dict[str, Any], **headers: str) -> tuple[int, Any]:
        """POST an activity to /api/messages; (status, parsed JSON body or text)."""
        conv = activity.get("conversation", {}).get("id")
        if conv:
            self.connector.add_conversation(conv)
        async with self.http.post(self.url, json=activity, headers=headers) as resp:
            text = await resp.text()
            try:
                body: Any = await resp.json(content_type=None) if text else None
            except ValueError:
                body = text
            return resp.status, body

    async def settle(self, timeout: float = 15.0) -> None:  # noqa: ASYNC109
        """Wait until the gateway's background work is done."""
        await self.gw.background.drain(timeout=timeout)


@pytest.fixture
async def connector() -> AsyncIterator[FakeBotConnector]:
    """A fake Bot Connector; every card it receives is checked against the 1.5 schema."""
    fake = await FakeBotConnector().start()
    try:
        yield fake
    finally:
        await fake.stop()
        for call in fake.calls:
            for card in call.cards:
                assert_valid_card(card)


@pytest.fixture
def teams_env(monkeypatch: pytest.MonkeyPatch, nats_url: str, tmp_path: Path) -> None:
    """Configuration as an operator sets it: environment variables (no TEAMS_APP_ID: anonymous)."""
    monkeypatch.setenv("NATS_URL", nats_url)
    monkeypatch.setenv("R42_STORE", f"sqlite:///{tmp_path}/r42.db")
    monkeypatch.setenv("R42_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("R42_LLM", "offline")
    monkeypatch.setenv("R42_LIMITER", "off")
    monkeypatch.setenv("R42_ADMINS", f"UADMIN1,{ADMIN_AAD}")
    monkeypatch.delenv("TEAMS_APP_ID", raising=False)


@pytest.fixture
async def teams(teams_env: None, connector: FakeBotConnector, unique: str) -> AsyncIterator[Teams]:
    """The Teams gateway service on a free loopback port in its own bus namespace."""
    settings = build_settings()
    mode = choose_teams_mode(settings, port=0)
    ctx = await start_service(
        "gateway", build=partial(build, mode=mode), settings=settings, namespace=f"t{unique}"
    )
    server = teams_deps(ctx).server
    assert server is not None  # serving once start_service returns
    owners = await start_owners(settings, namespace=ctx.namespace)
    http = aiohttp.ClientSession()
    ctx.closers.insert(0, http.close)
    try:
        yield Teams(
            ctx=ctx,
            url=f"http://127.0.0.1:{server.port}/api/messages",
            connector=connector,
            http=http,
        )
    finally:
        await stop_all(owners, ctx)


@pytest.fixture
async def r42(teams: Teams) -> R42Stub:
    """A stand-in r42 service answering rpc.r42.* on the gateway's broker."""
    stub = R42Stub()
    ns, broker = teams.namespace, teams.ctx.broker
    await serve_rpc(
        broker, CHAT_SUBJECT, request_model=ChatRequest, handler=stub.on_chat, namespace=ns
    )
    await serve_rpc(
        broker,
        PROPOSAL_SUBJECT,
        request_model=ProposalDecisionRequest,
        handler=stub.on_decision,
        namespace=ns,
    )
    await serve_rpc(
        broker, CLEAR_SUBJECT, request_model=ClearRequest, handler=stub.on_clear, namespace=ns
    )
    return stub


async def admin_chat(teams: Teams) -> str:
    """Register the admin's personal chat (as if they wrote to the bot once); its id."""
    conv = personal_conversation(ADMIN_AAD)
    teams.connector.add_conversation(conv)
    return conv


__all__ = ["Teams", "admin_chat", "asyncio"]
