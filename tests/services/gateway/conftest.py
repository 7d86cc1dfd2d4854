"""Fixtures: a running gateway (HTTP mode) on the real bus and a temp store, plus bus stubs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from shared.bus import (
    CHAT_SUBJECT,
    CLEAR_SUBJECT,
    PROPOSAL_SUBJECT,
    ChatReply,
    ChatRequest,
    ClearReply,
    ClearRequest,
    ProposalDecisionReply,
    ProposalDecisionRequest,
    serve_rpc,
)
from shared.config import Settings
from shared.store import Topic
from tests.fakes.slack_server import FakeSlack
from tests.services.gateway.harness import (
    Gateway,
    Tap,
    gateway_settings,
    make_tap,
    start_gateway,
    stop_all,
)


@pytest.fixture
def settings(nats_url: str, tmp_path: Path, fake_slack: FakeSlack) -> Settings:
    """Gateway settings on the session's NATS, a temp store and the fake Slack."""
    return gateway_settings(nats_url=nats_url, tmp_path=tmp_path, fake=fake_slack)


@pytest.fixture
async def gateway(settings: Settings, fake_slack: FakeSlack, unique: str) -> AsyncIterator[Gateway]:
    """A running gateway in its own bus namespace."""
    gw = await start_gateway(settings, fake=fake_slack, namespace=f"g{unique}")
    try:
        yield gw
    finally:
        await stop_all(gw.ctx, *gw.others)  # the gateway drains its work while owners answer


class R42Stub:
    """Answers rpc.r42.* like the r42 service would, recording each request."""

    def __init__(self) -> None:
        self.chats: list[ChatRequest] = []
        self.decisions: list[ProposalDecisionRequest] = []
        self.clears: list[ClearRequest] = []
        self.reply: Callable[[ChatRequest], Awaitable[ChatReply]] = self._default
        self.decide: Callable[[ProposalDecisionRequest], Awaitable[ProposalDecisionReply]] = (
            self._decline
        )
        self.gate: asyncio.Event | None = None

    async def _default(self, req: ChatRequest) -> ChatReply:
        return ChatReply(text=f"Antwoord op: {req.text}")

    async def _decline(self, req: ProposalDecisionRequest) -> ProposalDecisionReply:
        return ProposalDecisionReply(status="declined")

    async def on_chat(self, req: ChatRequest) -> ChatReply:
        self.chats.append(req)
        if self.gate is not None:
            await self.gate.wait()
        return await self.reply(req)

    async def on_decision(self, req: ProposalDecisionRequest) -> ProposalDecisionReply:
        self.decisions.append(req)
        return await self.decide(req)

    async def on_clear(self, req: ClearRequest) -> ClearReply:
        self.clears.append(req)
        return ClearReply(removed=4, greeting="Hoi! Waar kan ik je mee helpen?")


@pytest.fixture
async def r42_stub(gateway: Gateway) -> R42Stub:
    """A stand-in r42 service answering on the gateway's broker."""
    stub = R42Stub()
    ns = gateway.namespace
    broker = gateway.ctx.broker
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


@pytest.fixture
async def tap(gateway: Gateway) -> Tap:
    """Records every event in the test's namespace (subscribed before the test acts)."""
    return await make_tap(gateway)


async def seed_topics(gateway: Gateway, *topics: tuple[str, str]) -> None:
    """Put topics (id, label) into the store."""
    await gateway.ctx.store.topics.upsert_many(
        Topic(id=tid, label=label, type="concept", description=f"Over {label}.")
        for tid, label in topics
    )
