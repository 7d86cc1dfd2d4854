"""Contract: chat turns are put and read by turn id until they expire."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from shared.store import TURN_RETENTION, ChatTurn, Store

# Ahead of the real clock: MongoDB's TTL monitor deletes by the server's time, not `now`.
T0 = (datetime.now(UTC) + timedelta(days=400)).replace(microsecond=0)


def turn(turn_id: str, **kw: object) -> ChatTurn:
    return ChatTurn.model_validate({"turn_id": turn_id, "user": "U1", **kw})


async def test_a_turn_reads_back_until_it_expires(store: Store) -> None:
    put = await store.turns.put(
        turn("cm-1.5", question="Wat is OKR?", topic_ids=["okr", "scrum"], answer="OKR is …",
             model="claude-x", prompt_version="r42-v3"),
        now=T0,
    )  # fmt: skip
    assert (put.created_at, put.expires_at) == (T0, T0 + TURN_RETENTION)
    got = await store.turns.get("cm-1.5", now=T0 + timedelta(minutes=5))
    assert got == put
    just_before = T0 + TURN_RETENTION - timedelta(milliseconds=1)
    assert await store.turns.get("cm-1.5", now=just_before) == put
    assert await store.turns.get("cm-1.5", now=T0 + TURN_RETENTION) is None
    assert await store.turns.get("missing", now=T0) is None


async def test_putting_a_turn_again_replaces_it(store: Store) -> None:
    await store.turns.put(turn("t1", answer="eerste"), now=T0)
    later = T0 + timedelta(hours=1)
    await store.turns.put(turn("t1", answer="tweede", user="U2"), now=later)
    got = await store.turns.get("t1", now=later)
    assert got is not None and (got.answer, got.user, got.created_at) == ("tweede", "U2", later)


async def test_expired_turns_are_pruned(store: Store) -> None:
    await store.turns.put(turn("old"), now=T0)
    await store.turns.put(turn("new"), now=T0 + timedelta(days=10))
    at = T0 + TURN_RETENTION + timedelta(days=1)
    assert await store.turns.prune(now=at) == 1
    assert await store.turns.prune(now=at) == 0
    assert await store.turns.get("new", now=T0 + timedelta(days=11)) is not None
    assert await store.turns.get("old", now=T0) is None  # gone, not merely hidden


def test_a_turn_needs_an_id_and_valid_topic_ids() -> None:
    with pytest.raises(ValidationError):
        turn("")
    with pytest.raises(ValidationError):
        turn("x" * 201)
    with pytest.raises(ValidationError):
        turn("t", topic_ids=["Not A Topic Id!"])


async def test_a_turn_may_carry_its_own_expiry(store: Store) -> None:
    await store.turns.put(turn("short", expires_at=T0 + timedelta(minutes=1)), now=T0)
    assert await store.turns.get("short", now=T0) is not None
    assert await store.turns.get("short", now=T0 + timedelta(minutes=2)) is None


async def test_recent_turns_come_newest_first_without_expired_ones(store: Store) -> None:
    for n in range(4):
        await store.turns.put(turn(f"t{n}", question=f"vraag {n}"), now=T0 + timedelta(hours=n))
    at = T0 + timedelta(hours=5)
    recent = await store.turns.recent(now=at)
    assert [t.turn_id for t in recent] == ["t3", "t2", "t1", "t0"]
    assert [t.turn_id for t in await store.turns.recent(limit=2, now=at)] == ["t3", "t2"]
    since = await store.turns.recent(since=T0 + timedelta(hours=2), now=at)
    assert [t.turn_id for t in since] == ["t3", "t2"]
    assert await store.turns.recent(limit=0, now=at) == []
    late = T0 + TURN_RETENTION + timedelta(hours=1, minutes=30)  # t0 and t1 have expired
    assert [t.turn_id for t in await store.turns.recent(now=late)] == ["t3", "t2"]


async def test_a_kb_miss_reads_back_in_get_and_recent(store: Store) -> None:
    await store.turns.put(turn("miss", question="Mag de hond mee?", kb_miss=True), now=T0)
    await store.turns.put(turn("hit", question="Hoe werkt verlof?"), now=T0)
    got = await store.turns.get("miss", now=T0)
    assert got is not None and got.kb_miss is True
    recent = await store.turns.recent(since=T0, now=T0)
    assert {t.turn_id: t.kb_miss for t in recent} == {"miss": True, "hit": False}
