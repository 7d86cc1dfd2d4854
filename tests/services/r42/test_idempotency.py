"""Idempotent chat turns over the real bus: retries land once, repeats replay without a model call.

Two r42 responders (R42Handlers on their own connections, sharing one SQLite store) answer
rpc.r42.chat on the session's nats-server; the gateway core's ask_r42 is the caller.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from faststream.nats import NatsBroker

from services.gateway.core.chat import _wire_turn_id
from services.gateway.core.chat_retry import ShownText, ask_r42
from services.r42.handlers import R42Handlers
from services.r42.idempotency import ANSWER_SCOPE, LOCK_PREFIX, Turn, TurnLedger, turn_key
from services.r42.knowledge import KbCache
from services.r42.offline import offline_plans
from services.r42.ports import R42Store
from shared.bus import (
    CHAT_SUBJECT,
    ChatReply,
    ChatRequest,
    Event,
    KbUpdated,
    NoResponderError,
    RpcServer,
    build_broker,
    serve_rpc,
    start_broker,
)
from shared.bus.chat import TURN_ID_PATTERN
from shared.errors import TransientError
from shared.llm import LLMRuntime, OfflineProvider
from shared.store import Store, ThreadMessage, Topic, utcnow
from tests.fakes.anthropic_server import FakeAnthropic, slow, text_reply
from tests.services.r42.conftest import WAIT

ANSWER = "Verlof vraag je aan in het HR-portaal (zie Verlof)."
QUESTION = "Hoe vraag ik verlof aan?"


async def _no_publish(event: Event) -> None:
    raise AssertionError(f"a chat turn published {event!r}")


@dataclass
class Responder:
    """One r42 replica: its connection, its chat server, how many turns reached it."""

    name: str
    broker: NatsBroker
    handlers: R42Handlers
    turns: int = 0
    server: RpcServer[ChatRequest] | None = None

    async def chat(self, req: ChatRequest) -> ChatReply:
        self.turns += 1
        return await self.handlers.chat(req)

    async def die(self) -> None:
        """Stop answering and cancel the turns in flight: their replies never come."""
        if self.server is not None:
            await self.server.stop(grace=0)


@pytest.fixture
async def responders(
    nats_url: str, unique: str, store: Store, kb: KbCache
) -> AsyncIterator[list[Responder]]:
    started: list[Responder] = []
    for name in ("a", "b"):
        broker = build_broker(nats_url, name=f"r42-{name}-{unique}")
        await start_broker(broker, namespace=unique, timeout=WAIT)
        ledger = TurnLedger(store, lease_s=0.6, owner=f"replica-{name}")
        handlers = R42Handlers(store=store, kb=kb, publish=_no_publish, ledger=ledger)
        r = Responder(name, broker, handlers)
        r.server = await serve_rpc(broker, CHAT_SUBJECT, request_model=ChatRequest,
                                   handler=r.chat, namespace=unique)  # fmt: skip
        started.append(r)
    yield started
    for r in started:
        await r.die()
        await r.broker.stop()


@pytest.fixture
async def caller(nats_url: str, unique: str) -> AsyncIterator[NatsBroker]:
    broker = build_broker(nats_url, name=f"gateway-{unique}")
    await start_broker(broker, namespace=unique, timeout=WAIT)
    yield broker
    await broker.stop()


async def _run(ledger: TurnLedger, req: ChatRequest, store: Store, turn: Turn) -> ChatReply:
    return await ledger.run(req, store=store, turn=turn, thread_lock=asyncio.Lock())


async def _model_called(fake: FakeAnthropic) -> None:
    """Poll until the fake model got a request (it runs in its own thread)."""
    deadline = asyncio.get_running_loop().time() + WAIT
    while not fake.requests:
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"no model call within {WAIT} s")
        await asyncio.sleep(0.01)


async def _user_turns(store: Store, thread: str) -> list[str]:
    return [m.text for m in await store.threads.get(thread) if m.role == "user"]


async def test_a_responder_killed_mid_turn_is_retried_on_another_once(
    responders: list[Responder], caller: NatsBroker, unique: str, store: Store,
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime,
) -> None:  # fmt: skip
    fake_anthropic.enqueue(slow(text_reply(ANSWER), 5.0), text_reply(ANSWER))
    req = ChatRequest(user_id="U1", text=QUESTION, turn_id="client-msg-1")
    asked = asyncio.create_task(ask_r42(caller, req, timeout=WAIT, namespace=unique, attempt_s=0.5))
    await _model_called(fake_anthropic)
    lease = await store.locks.get(f"{LOCK_PREFIX}{turn_key(req)}")
    assert lease is not None  # the replica running the turn holds its lease
    busy = next(r for r in responders if lease.owner.startswith(f"replica-{r.name}:"))
    await busy.die()  # mid-turn: its reply never comes
    reply = await asyncio.wait_for(asked, WAIT)
    assert reply.text == ANSWER and reply.error_ref is None
    assert next(r for r in responders if r is not busy).turns >= 1  # the retry went there
    assert len(fake_anthropic.requests) == 2  # the dead turn's call, then the retry's
    assert await _user_turns(store, "U1") == [QUESTION]  # one thread entry
    assistant = [m.text for m in await store.threads.get("U1") if m.role == "assistant"]
    assert assistant.count(ANSWER) == 1


async def test_a_repeated_turn_id_replays_the_stored_reply_without_a_model_call(
    responders: list[Responder], caller: NatsBroker, unique: str, store: Store,
    fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime,
) -> None:  # fmt: skip
    fake_anthropic.enqueue(slow(text_reply(ANSWER), 0.3))
    req = ChatRequest(user_id="U1", text=QUESTION, turn_id="Ev0001")
    # Two deliveries at once (they may land on both replicas): one turn, one model call.
    first, second = await asyncio.gather(
        ask_r42(caller, req, timeout=WAIT, namespace=unique),
        ask_r42(caller, req, timeout=WAIT, namespace=unique),
    )
    later = await ask_r42(caller, req, timeout=WAIT, namespace=unique)
    assert first.text == second.text == later.text == ANSWER
    assert [first.replayed, second.replayed].count(True) == 1 and later.replayed
    assert later.sources == first.sources or later.sources == second.sources
    assert len(fake_anthropic.requests) == 1
    assert await _user_turns(store, "U1") == [QUESTION]
    # The same turn id from another user is that user's own turn, never U1's reply.
    fake_anthropic.enqueue(text_reply("Antwoord voor U2."))
    other = await ask_r42(caller, req.model_copy(update={"user_id": "U2"}), timeout=WAIT,
                          namespace=unique)  # fmt: skip
    assert other.text == "Antwoord voor U2." and not other.replayed
    assert len(fake_anthropic.requests) == 2


async def test_without_a_turn_id_every_request_is_a_new_turn(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(text_reply(ANSWER), text_reply(ANSWER))
    handlers = R42Handlers(store=store, kb=kb, publish=_no_publish, ledger=TurnLedger(store))
    req = ChatRequest(user_id="U1", text=QUESTION)
    for _ in range(2):
        assert not (await handlers.chat(req)).replayed
    assert len(fake_anthropic.requests) == 2
    assert await _user_turns(store, "U1") == [QUESTION, QUESTION]


async def test_a_dead_holders_lease_is_taken_over_once_it_expires(store: Store) -> None:
    req = ChatRequest(user_id="U1", text=QUESTION, turn_id="t-dead")
    lock = f"{LOCK_PREFIX}{turn_key(req)}"
    assert await store.locks.acquire(lock, "dead-replica", ttl_s=0.4)
    ran: list[float] = []
    loop = asyncio.get_running_loop()
    started = loop.time()

    async def turn(s: R42Store) -> ChatReply:
        ran.append(loop.time() - started)
        return ChatReply(text=ANSWER)

    reply = await TurnLedger(store, lease_s=0.4).run(
        req, store=store, turn=turn, thread_lock=asyncio.Lock()
    )
    assert reply.text == ANSWER and len(ran) == 1 and ran[0] >= 0.3
    again = await _run(TurnLedger(store), req, store, turn)
    assert again.replayed and again.text == ANSWER and len(ran) == 1


async def test_a_holder_that_died_after_its_answer_is_finished_without_a_new_turn(
    store: Store,
) -> None:
    req = ChatRequest(user_id="U1", text=QUESTION, turn_id="t-gap", conversation="dm")
    asked = utcnow() - timedelta(seconds=2)
    pair = [ThreadMessage(role="user", text=QUESTION, at=asked),
            ThreadMessage(role="assistant", text=ANSWER, at=utcnow())]  # fmt: skip
    body = {"messages": [m.model_dump(mode="json") for m in pair]}
    key = turn_key(req)
    assert await store.idempotency.put_if_absent(ANSWER_SCOPE, key, body, ttl_s=60)

    async def turn(s: R42Store) -> ChatReply:
        raise AssertionError("the answered turn ran again")

    ledger = TurnLedger(store)
    reply = await _run(ledger, req, store, turn)
    assert reply.text == ANSWER and reply.replayed
    assert await _user_turns(store, req.thread_key) == [QUESTION]
    # Had the thread append gone through before the death, it is not appended again.
    again = req.model_copy(update={"turn_id": "t-gap-2"})
    await store.idempotency.put_if_absent(ANSWER_SCOPE, turn_key(again), body, ttl_s=60)
    await _run(ledger, again, store, turn)
    assert await _user_turns(store, req.thread_key) == [QUESTION]


async def test_a_retry_shows_only_text_beyond_what_was_streamed() -> None:
    pieces: list[str] = []

    async def sink(text: str) -> None:
        pieces.append(text)

    shown = ShownText(sink)
    first = shown.attempt()
    for chunk in ("Verlof ", "vraag je "):
        await first(chunk)
    second = shown.attempt()  # the same answer again, from the start
    for chunk in ("Verlof vraag", " je aan in", " het HR-portaal."):
        await second(chunk)
    assert "".join(pieces) == "Verlof vraag je aan in het HR-portaal."
    third = shown.attempt()  # a different answer: nothing more streams, the reply replaces
    await third("Iets anders dat langer is dan wat er stond, en doorgaat.")
    assert "".join(pieces) == "Verlof vraag je aan in het HR-portaal."


async def test_with_no_replica_subscribed_the_caller_gives_up_after_a_short_bound(
    caller: NatsBroker, unique: str
) -> None:
    req = ChatRequest(user_id="U1", text=QUESTION, turn_id="t-nobody")
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(NoResponderError):
        await ask_r42(caller, req, timeout=WAIT, namespace=unique, unreachable_s=0.3)
    assert loop.time() - started < 3.0  # well inside the turn's budget


async def test_a_repeat_waits_for_a_live_holder_only_as_long_as_its_caller(store: Store) -> None:
    req = ChatRequest(user_id="U1", text=QUESTION, turn_id="t-live", wait_s=0.3)
    assert await store.locks.acquire(f"{LOCK_PREFIX}{turn_key(req)}", "live", ttl_s=30)

    async def turn(s: R42Store) -> ChatReply:
        raise AssertionError("a live holder's turn ran twice")

    with pytest.raises(TransientError, match="still being answered"):
        await asyncio.wait_for(_run(TurnLedger(store), req, store, turn), WAIT)


async def test_a_turn_that_asks_for_a_settled_kb_answers_from_the_update_just_heard(
    store: Store, offline_llm: LLMRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb = KbCache(store, fresh_wait_s=0.05)  # a turn normally waits this long for an update
    offline_llm.provider = OfflineProvider(offline_plans(lambda: kb.current))
    await kb.get()  # the snapshot a running service has
    await store.topics.upsert_many([Topic(
        id="thuiswerken", label="Thuiswerken", type="process",
        description="Thuiswerken mag twee dagen per week, in overleg met je teamlead.",
    )])  # fmt: skip
    touching = store.relations.touching

    async def slow_touching(ids: Any) -> Any:
        await asyncio.sleep(0.8)  # an update slowed down, as on a loaded machine
        return await touching(ids)

    monkeypatch.setattr(store.relations, "touching", slow_touching)
    kb.update(KbUpdated(kb_hash="v2", changed_ids=["thuiswerken"], reason="ingest", actor="t"))
    handlers = R42Handlers(store=store, kb=kb, publish=_no_publish, ledger=TurnLedger(store))
    question = "Hoeveel dagen mag ik thuiswerken?"
    hurried = await handlers.chat(ChatRequest(user_id="U1", text=question))
    assert "thuiswerken" not in [s.id for s in hurried.sources]  # answered from the old one
    settled = await handlers.chat(ChatRequest(user_id="U2", text=question, settle_kb=True))
    assert [s.id for s in settled.sources] == ["thuiswerken"], settled
    await kb.aclose()


def test_a_platform_id_of_any_shape_becomes_one_stable_turn_id() -> None:
    assert _wire_turn_id("Ev0A1B2C3D") == "Ev0A1B2C3D"
    odd = _wire_turn_id("1:1 bericht-é " + "x" * 300)
    assert re.fullmatch(TURN_ID_PATTERN, odd) and odd == _wire_turn_id("1:1 bericht-é " + "x" * 300)
    assert odd != _wire_turn_id("1:1 bericht-e " + "x" * 300)


class _StalledLocks:
    """A replica's view of the lease table while its process is stalled: nothing gets through."""

    def __init__(self, inner: Any, resume: asyncio.Event) -> None:
        self.inner, self.resume, self.stalled = inner, resume, False

    async def renew(self, name: str, owner: str, *, ttl_s: float) -> bool:
        if self.stalled:
            await self.resume.wait()
        return bool(await self.inner.renew(name, owner, ttl_s=ttl_s))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@dataclass
class _StalledReplicaStore:
    inner: Store
    locks: _StalledLocks

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def test_a_holder_that_stalls_past_its_lease_never_asks_the_model_again(
    store: Store, kb: KbCache, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    from services.r42.turn import chat_turn
    from shared.store import LeaseLostError

    fake_anthropic.enqueue(text_reply(ANSWER), text_reply("Een tweede antwoord."))
    req = ChatRequest(user_id="U1", text=QUESTION, turn_id="t-stalled")
    resume, started = asyncio.Event(), asyncio.Event()
    locks = _StalledLocks(store.locks, resume)
    stalled = TurnLedger(_StalledReplicaStore(store, locks), lease_s=0.4, owner="replica-a")

    async def stalled_turn(s: R42Store) -> ChatReply:
        locks.stalled = True  # replica A stops right before its model call, lease unrenewed
        started.set()
        await resume.wait()
        return await chat_turn(store=s, kb=kb, request=req)

    a = asyncio.create_task(_run(stalled, req, store, stalled_turn))
    await asyncio.wait_for(started.wait(), WAIT)
    # The gateway's retry reaches replica B, which takes the expired lease over.
    b = R42Handlers(store=store, kb=kb, publish=_no_publish,
                    ledger=TurnLedger(store, lease_s=0.4, owner="replica-b"))  # fmt: skip
    reply = await asyncio.wait_for(b.chat(req), WAIT)
    assert reply.text == ANSWER and len(fake_anthropic.requests) == 1
    resume.set()  # A wakes up and would ask the model the same question
    with pytest.raises(LeaseLostError):
        await asyncio.wait_for(a, WAIT)
    assert len(fake_anthropic.requests) == 1  # A found out before calling the model
    assert await _user_turns(store, "U1") == [QUESTION]
    again = await _run(TurnLedger(store), req, store, stalled_turn)
    assert again.replayed and again.text == ANSWER
