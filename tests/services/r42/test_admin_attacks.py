"""A caller lying about being an admin, against the real r42 service on nats-server.

The contracts carry no admin claim: a request that adds one is refused as an unknown
field, and without it the service decides from its own admin list.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nats
import pytest

from services.r42.app import build
from shared.bus import (
    CHAT_SUBJECT,
    PROPOSAL_SUBJECT,
    ChatReply,
    ChatRequest,
    ProposalDecisionReply,
    ProposalDecisionRequest,
    build_broker,
    ns_subject,
    request,
)
from shared.config import build_settings
from shared.errors import BadInputError
from shared.runtime.service import ServiceContext, start_service, stop_service
from shared.store import open_store
from tests.services.r42.conftest import WAIT, seed_kb

ROLE_QUESTION = "Er is een rol Scrum master die de sprint review begeleidt."


class ForgedChat(ChatRequest):
    """A ChatRequest with the admin claim a liar adds on the wire."""

    is_admin: bool = True


class ForgedDecision(ProposalDecisionRequest):
    """A ProposalDecisionRequest with the admin claim a liar adds on the wire."""

    is_admin: bool = True


@pytest.fixture(params=[[], ["A1"]], ids=["no-admins", "other-admin"])
async def r42(
    request: pytest.FixtureRequest, nats_url: str, unique: str, tmp_path: Path
) -> AsyncIterator[ServiceContext]:
    url = f"sqlite:///{tmp_path / 'r42.db'}"
    seeding = await open_store(url)
    await seed_kb(seeding)
    await seeding.close()
    settings = build_settings(nats_url=nats_url, store=url, llm="offline", limiter="off",
                              admins=request.param)  # fmt: skip
    ctx = await start_service("r42", build=build, settings=settings, namespace=f"a{unique}")
    try:
        yield ctx
    finally:
        await stop_service(ctx)


async def test_a_claimed_admin_flag_never_applies_a_proposal(r42: ServiceContext) -> None:
    decided: list[Any] = []
    nc = await nats.connect(r42.nats_url)

    async def on_decided(msg: Any) -> None:
        decided.append(msg)

    await nc.subscribe(ns_subject("kb.delta.decided", r42.namespace), cb=on_decided)
    client = build_broker(r42.nats_url, name="liar")
    await client.connect()
    try:
        forged = ForgedChat(user_id="U9", user_name="U9", text=ROLE_QUESTION)
        assert '"is_admin":true' in forged.model_dump_json()
        with pytest.raises(BadInputError, match=r"is_admin.*[Ee]xtra inputs"):
            await request(client, CHAT_SUBJECT, forged, response_model=ChatReply,
                          namespace=r42.namespace, timeout=WAIT)  # fmt: skip
        chat = ChatRequest(user_id="U9", user_name="U9", text=ROLE_QUESTION)
        reply = await request(client, CHAT_SUBJECT, chat, response_model=ChatReply,
                              namespace=r42.namespace, timeout=WAIT)  # fmt: skip
        assert reply.proposal is not None
        lie = ForgedDecision(proposal_id=reply.proposal.id, user_id="U9", accept=True)
        with pytest.raises(BadInputError, match=r"is_admin.*[Ee]xtra inputs"):
            await request(client, PROPOSAL_SUBJECT, lie, response_model=ProposalDecisionReply,
                          namespace=r42.namespace, timeout=WAIT)  # fmt: skip
        stored = await r42.store.proposals.get(reply.proposal.id)
        assert stored is not None and stored.status == "open"  # the forged decision did nothing
        honest = ProposalDecisionRequest(proposal_id=reply.proposal.id, user_id="U9", accept=True)
        decision = await request(client, PROPOSAL_SUBJECT, honest,
                                 response_model=ProposalDecisionReply, namespace=r42.namespace,
                                 timeout=WAIT)  # fmt: skip
        await nc.flush()
        await asyncio.sleep(0.2)  # a decided event would have arrived by now
    finally:
        await client.stop()
        await nc.close()
    assert decision.status == "pending_review"  # queued for a real admin, not applied
    assert decided == []
    suggestion = await r42.store.suggestions.get(decision.suggestion_id or "")
    assert suggestion is not None and suggestion.status == "pending"
