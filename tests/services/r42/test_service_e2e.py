"""The r42 service over the real bus and store, with the real extractor as the KG owner.

r42 and the extractor run in-process (start_service) on the session's nats-server in a
per-test namespace; a client broker sends rpc.r42.* requests and a test consumer records
what reaches kb.delta.proposed / kb.delta.decided / kb.updated.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import pytest
from faststream.nats import NatsBroker
from nats.js.errors import NotFoundError

from services.extractor.app import build as build_extractor
from services.extractor.config import build_extractor_settings
from services.r42 import app as r42_app
from services.r42.app import kb_of
from services.r42.knowledge import KbCache
from services.r42.prompts import GREETING
from shared.bus import (
    CHAT_SUBJECT,
    CLEAR_SUBJECT,
    ERROR_HEADER,
    PROPOSAL_SUBJECT,
    STREAMS,
    ChatReply,
    ChatRequest,
    ClearReply,
    ClearRequest,
    Event,
    KbDeltaDecided,
    KbDeltaProposed,
    KbUpdated,
    ProposalDecisionReply,
    ProposalDecisionRequest,
    build_broker,
    jetstream,
    ns_stream,
    ns_subject,
    publish_event,
    request,
    start_broker,
    subscribe_event,
)
from shared.config import build_settings
from shared.errors import BadInputError
from shared.runtime.service import ServiceContext, start_service, stop_service
from shared.store import Topic
from tests.services.r42.conftest import WAIT, kb_dump, seed_kb

E = TypeVar("E", bound=Event)
ROLE_QUESTION = "Er is een rol Scrum master die de sprint review begeleidt."


@dataclass
class Stack:
    """r42 (+ extractor) in one namespace, a client broker and the events it saw."""

    ns: str
    r42: ServiceContext
    client: NatsBroker
    events: list[Event] = field(default_factory=list)
    arrived: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def record(self, event: Event) -> None:
        async with self.arrived:
            self.events.append(event)
            self.arrived.notify_all()

    async def wait_for(self, kind: type[E], test: Callable[[E], bool] = lambda e: True) -> E:
        """The first recorded event of a kind matching test (waits up to WAIT seconds)."""

        def found() -> E | None:
            return next((e for e in self.events if isinstance(e, kind) and test(e)), None)

        async with self.arrived:
            await asyncio.wait_for(self.arrived.wait_for(lambda: found() is not None), WAIT)
        event = found()
        assert event is not None
        return event

    async def chat(self, text: str, user: str = "U1") -> ChatReply:
        req = ChatRequest(user_id=user, user_name=user, text=text)
        return await request(self.client, CHAT_SUBJECT, req, response_model=ChatReply,
                             timeout=WAIT, namespace=self.ns)  # fmt: skip

    async def decide(self, pid: str, user: str, *, accept: bool = True) -> Any:
        req = ProposalDecisionRequest(proposal_id=pid, user_id=user, accept=accept)
        return await request(self.client, PROPOSAL_SUBJECT, req,
                             response_model=ProposalDecisionReply, timeout=WAIT,
                             namespace=self.ns)  # fmt: skip

    async def stored_count(self, subject: str) -> int:
        """Messages JetStream holds on a subject (publish_event waited for the acks)."""
        js = jetstream(self.client)
        try:
            await js.get_last_msg(ns_stream("KB", self.ns), ns_subject(subject, self.ns))
        except NotFoundError:
            return 0
        info = await js.stream_info(ns_stream("KB", self.ns), subjects_filter=">")
        return (info.state.subjects or {}).get(ns_subject(subject, self.ns), 0)


async def _start_r42(settings: Any, ns: str) -> ServiceContext:
    return await start_service("r42", build=r42_app.build, settings=settings, namespace=ns)


@pytest.fixture
async def stack(nats_url: str, unique: str, tmp_path: Path) -> AsyncIterator[Stack]:
    ns = f"r42{unique}"
    settings = build_settings(nats_url=nats_url, store=f"sqlite:///{tmp_path / 'r42.db'}",
                              llm="offline", limiter="off", admins=["A1"])  # fmt: skip
    ext = build_extractor_settings(bus_namespace=ns, sample_handbook=False)
    extractor = await start_service("extractor", build=partial(build_extractor, extractor=ext),
                                    settings=settings, namespace=ns)  # fmt: skip
    await seed_kb(extractor.store)
    r42 = await _start_r42(settings, ns)
    client = build_broker(nats_url, name=f"test-client-{ns}")
    stack = Stack(ns=ns, r42=r42, client=client)
    for kind in (KbDeltaProposed, KbDeltaDecided, KbUpdated):
        subscribe_event(client, kind, durable=f"t-{kind.__name__}", handler=stack.record,
                        namespace=ns)  # fmt: skip
    await start_broker(client, namespace=ns, timeout=WAIT)
    try:
        yield stack
    finally:
        js = jetstream(client)
        await stop_service(r42)
        await stop_service(extractor)
        for spec in STREAMS:
            with contextlib.suppress(Exception):
                await js.delete_stream(ns_stream(spec.name, ns))
        await client.stop()


async def test_the_service_shares_the_gil_in_short_turns(stack: Stack) -> None:
    """Started, r42 hands the GIL over every millisecond (its store thread beside a rebuild)."""
    import sys

    from services.r42.snapshot import SWITCH_INTERVAL_S

    assert SWITCH_INTERVAL_S < 0.005 and sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL_S)


async def test_chat_over_rpc_is_grounded_and_clear_reseeds(stack: Stack) -> None:
    reply = await stack.chat("Hoe vraag ik verlof aan?")
    assert reply.offline and reply.text.startswith("[offline] Verlof:")
    assert "HR-portaal" in reply.text and [s.id for s in reply.sources] == ["verlof"]
    assert len(await stack.r42.store.threads.get("U1")) == 3
    cleared = await request(
        stack.client, CLEAR_SUBJECT, ClearRequest(user_id="U1"), response_model=ClearReply,
        timeout=WAIT, namespace=stack.ns,
    )  # fmt: skip
    assert cleared.removed == 3 and cleared.greeting == GREETING
    assert [m.text for m in await stack.r42.store.threads.get("U1")] == [GREETING]


async def test_user_accept_becomes_a_pending_suggestion(stack: Stack) -> None:
    before = await kb_dump(stack.r42.store)
    reply = await stack.chat(ROLE_QUESTION, "U1")
    assert reply.proposal is not None
    assert [t.id for t in reply.proposal.delta.topics] == ["scrum-master"]
    decision = await stack.decide(reply.proposal.id, "U1")
    assert decision.status == "pending_review" and decision.suggestion_id
    proposed = await stack.wait_for(KbDeltaProposed)
    assert proposed.suggestion_id == decision.suggestion_id
    assert proposed.proposed_by == "U1" and proposed.delta == reply.proposal.delta
    suggestion = await stack.r42.store.suggestions.get(decision.suggestion_id)
    assert suggestion is not None and suggestion.status == "pending"
    # Nothing is applied without an admin: no decision on the bus, the KB unchanged.
    assert await stack.stored_count(KbDeltaDecided.SUBJECT) == 0
    assert await stack.stored_count(KbUpdated.SUBJECT) == 0
    assert await kb_dump(stack.r42.store) == before
    again = await stack.decide(reply.proposal.id, "U1")
    assert again.status == "already_decided"


async def test_admin_accept_is_applied_by_the_extractor(stack: Stack) -> None:
    reply = await stack.chat(ROLE_QUESTION, "A1")
    assert reply.proposal is not None
    decision = await stack.decide(reply.proposal.id, "A1")
    assert decision.status == "applied"
    decided = await stack.wait_for(KbDeltaDecided)
    assert decided.decision == "approved" and decided.decided_by == "A1"
    assert await stack.stored_count(KbDeltaDecided.SUBJECT) == 1  # the helper counts for real
    assert decided.suggestion_id == decision.suggestion_id
    updated = await stack.wait_for(KbUpdated, lambda e: "scrum-master" in e.changed_ids)
    assert updated.kb_hash
    store = stack.r42.store
    topic = await store.topics.get("scrum-master")
    assert topic is not None and topic.type == "role"
    assert any(
        r.target == "scrum-master" for r in await store.relations.list(topic_id="sprint-review")
    )
    suggestion = await store.suggestions.get(decision.suggestion_id or "")
    assert suggestion is not None and suggestion.status == "approved"
    assert suggestion.decided_by == "A1" and suggestion.decided_at is not None
    # kb.updated reached r42, which applies it in the background (turns meanwhile answer
    # from the previous snapshot): once applied, the next turn answers from the new topic.
    kb = r42_app.kb_of(stack.r42)
    async with asyncio.timeout(WAIT):
        while kb.current is None or "scrum-master" not in kb.current.topics:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
    follow_up = await stack.chat("Wat doet de scrum master?", "A1")
    assert "scrum-master" in [s.id for s in follow_up.sources]
    assert (await stack.decide(reply.proposal.id, "A1")).status == "already_decided"


async def test_decline_publishes_and_stores_nothing(stack: Stack) -> None:
    reply = await stack.chat(ROLE_QUESTION, "U1")
    assert reply.proposal is not None
    decision = await stack.decide(reply.proposal.id, "U1", accept=False)
    assert decision.status == "declined"
    assert await stack.r42.store.suggestions.list() == []
    assert await stack.stored_count(KbDeltaProposed.SUBJECT) == 0
    with pytest.raises(BadInputError, match="only the user"):
        await stack.decide(reply.proposal.id, "U2")


async def test_bad_requests_get_error_replies(stack: Stack) -> None:
    nc = stack.client.connection
    body = json.dumps({"user_id": "", "text": "x"}).encode()
    raw = await nc.request(ns_subject(CHAT_SUBJECT, stack.ns), body, timeout=WAIT)
    assert raw.headers[ERROR_HEADER] == "bad_input"
    assert "user_id" in json.loads(raw.data)["error"]
    missing = await stack.decide("prop-unknown", "U1")
    assert missing.status == "not_found"


async def test_every_replica_sees_every_kb_update(stack: Stack, nats_url: str) -> None:
    second = await _start_r42(stack.r42.settings, stack.ns)
    try:
        caches: list[KbCache] = [kb_of(stack.r42), kb_of(second)]
        for cache in caches:
            assert "nieuw-onderwerp" not in (await cache.get()).topics
        await stack.r42.store.topics.upsert_many(
            [Topic(id="nieuw-onderwerp", label="Nieuw onderwerp", type="concept")]
        )
        await publish_event(stack.client, KbUpdated(kb_hash="x", reason="test", actor="test"),
                            namespace=stack.ns)  # fmt: skip
        for cache in caches:
            async with asyncio.timeout(WAIT):
                # Polled: the cache has no change hook, and a turn would call get() anyway.
                while "nieuw-onderwerp" not in (await cache.get()).topics:  # noqa: ASYNC110
                    await asyncio.sleep(0.02)
    finally:
        await stop_service(second)


async def test_concurrent_turns_of_one_user_keep_the_thread_consistent(stack: Stack) -> None:
    questions = ["Hoe vraag ik verlof aan?", "Wat doet de product owner?", "Wat zijn declaraties?"]
    replies = await asyncio.gather(*(stack.chat(q, "U5") for q in questions))
    assert all(r.error_ref is None for r in replies)
    thread = await stack.r42.store.threads.get("U5")
    assert [m.role for m in thread] == ["assistant"] + ["user", "assistant"] * 3
    assert thread[0].text == GREETING
    # Each answer directly follows its own question.
    answers = {r.text for r in replies}
    pairs = {(thread[i].text, thread[i + 1].text) for i in range(1, len(thread), 2)}
    assert {q for q, _ in pairs} == set(questions) and {a for _, a in pairs} == answers
