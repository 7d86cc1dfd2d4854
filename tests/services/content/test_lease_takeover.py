"""A replica that stalls past its topic lease neither calls the model nor writes after a takeover.

Two replicas share one SQLite file. Replica A's stall (a GC pause, SIGSTOP) is modelled by
holding its store calls: the read it was doing completes, the answer reaches A only when it
"resumes", and its lease renewals wait too, so the lease expires and replica B takes over.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import pytest

from services.content.ports import ContentStore
from services.content.service import handle_content_requested
from shared.bus import ContentRequested, Event
from shared.llm import LLMRuntime
from shared.store import LeaseLostError, Store, open_store
from tests.fakes.anthropic_server import FakeAnthropic, slow, tool_reply
from tests.fakes.stall import Stall, StalledStore
from tests.services.content.conftest import article

TTL = 0.3
WAIT = 15.0


def replica_a(store: Store, stall: Stall, *, at_read: bool) -> ContentStore:
    """Replica A: stalls right after reading the topic's content, or only its renewals."""
    if at_read:
        stall.frozen = True
    read = {"get": lambda: at_read and not stall.thawed.is_set()}
    held = {"content": read, "locks": {"renew": lambda: stall.frozen}}
    return cast(ContentStore, StalledStore(store, stall, held))


def request() -> ContentRequested:
    return ContentRequested(user_id="U1", topic_id="verlof", content_type="article",
                            actor="gateway")  # fmt: skip


async def _ignore(event: Event) -> None:
    del event


async def _run(store: ContentStore, event: ContentRequested) -> Any:
    return await handle_content_requested(
        event, store=store, publish=_ignore, last_attempt=False, lease_wait=WAIT, lease_ttl=TTL
    )


@pytest.fixture
async def replica_b(tmp_path: Path, store: Store) -> Any:
    other = await open_store(f"sqlite:///{tmp_path / 'content.db'}")  # the same file as `store`
    yield other
    await other.close()


async def test_a_replica_stalled_before_its_call_makes_no_call_after_a_takeover(
    store: Store, replica_b: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    fake_anthropic.enqueue(tool_reply("emit_learning_article", article(title="Van B")),
                           tool_reply("emit_learning_article", article(title="Van A")))  # fmt: skip
    stall = Stall()
    a_store = replica_a(store, stall, at_read=True)
    event = request()
    a = asyncio.create_task(_run(a_store, event))
    async with asyncio.timeout(WAIT):
        await stall.reached.wait()  # A holds the lease and has read "no content yet"
        ready = await _run(cast(ContentStore, replica_b), event)  # B takes the lease over
    assert ready.ok and len(fake_anthropic.requests) == 1
    stall.thaw()
    with pytest.raises(LeaseLostError):
        await a
    assert len(fake_anthropic.requests) == 1  # A found out before calling the model
    stored = await replica_b.content.get("verlof")
    assert stored is not None and stored.article is not None
    assert stored.article["title"] == "Van B"


async def test_a_replica_stalled_during_its_call_does_not_write_its_result(
    store: Store, replica_b: Store, fake_anthropic: FakeAnthropic, fake_llm: LLMRuntime
) -> None:
    # A's answer comes late (A was stopped while the call ran); B's comes at once.
    fake_anthropic.enqueue(slow(tool_reply("emit_learning_article", article(title="Van A")), 1.5),
                           tool_reply("emit_learning_article", article(title="Van B")))  # fmt: skip
    stall = Stall()
    a_store = replica_a(store, stall, at_read=False)
    event = request()
    a = asyncio.create_task(_run(a_store, event))
    async with asyncio.timeout(WAIT):
        while not fake_anthropic.requests:  # noqa: ASYNC110 - the fake has no arrival hook
            await asyncio.sleep(0.01)
        stall.frozen = True  # from now on A renews nothing
        ready = await _run(cast(ContentStore, replica_b), event)
        assert ready.ok
        written = await replica_b.content.get("verlof")
        stall.thaw()
        with pytest.raises(LeaseLostError):
            await a
    assert len(fake_anthropic.requests) == 2  # A's call was in flight: unavoidable, not written
    stored = await replica_b.content.get("verlof")
    assert stored is not None and stored.article is not None
    assert stored.article["title"] == "Van B"
    assert written is not None and stored.generated_at == written.generated_at  # no second write
    assert (await replica_b.idempotency.get("content.requested", event.event_id)) is not None
