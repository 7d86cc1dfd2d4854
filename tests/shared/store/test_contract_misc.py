"""Contract: threads, suggestions, LLM calls, handbook sync, curriculum and settings."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from shared.errors import BadInputError, NotFoundError
from shared.llm.telemetry import LLMCallRecord
from shared.store import THREAD_MAX_MESSAGES, Store, Suggestion, ThreadMessage

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def msg(i: int, role: str = "user") -> ThreadMessage:
    return ThreadMessage.model_validate(
        {"role": role, "text": f"m{i}", "at": T0 + timedelta(seconds=i)}
    )


async def test_thread_keeps_the_newest_fifty(store: Store) -> None:
    await store.threads.append("U1", [msg(i) for i in range(30)])
    await store.threads.append("U2", [msg(0, "assistant")])
    for i in range(30, 61):
        await store.threads.append("U1", [msg(i, "assistant" if i % 2 else "user")])
    kept = await store.threads.get("U1")
    assert len(kept) == THREAD_MAX_MESSAGES == 50
    assert [m.text for m in kept] == [f"m{i}" for i in range(11, 61)]
    assert kept[-1].role == "user" and kept[-2].role == "assistant"
    assert kept[0].at == T0 + timedelta(seconds=11)
    await store.threads.append("U1", [msg(i) for i in range(100, 160)])  # one big batch
    assert [m.text for m in await store.threads.get("U1")] == [f"m{i}" for i in range(110, 160)]
    assert [m.text for m in await store.threads.get("U2")] == ["m0"]
    assert await store.threads.clear("U1") == 50
    assert await store.threads.get("U1") == []
    with pytest.raises(BadInputError):
        await store.threads.append("", [msg(1)])


def suggestion(sid: str, **kw: object) -> Suggestion:
    delta = {"topics_upsert": [{"id": "okr", "label": "OKR", "type": "concept"}]}
    return Suggestion.model_validate({"id": sid, "delta": delta, "proposed_by": "U1", **kw})


async def test_suggestion_decide_is_compare_and_set(store: Store) -> None:
    created = await store.suggestions.create(suggestion("s1", context={"channel": "C1"}))
    assert created.status == "pending" and created.context == {"channel": "C1"}
    assert (await store.suggestions.create(suggestion("s1", proposed_by="U9"))).proposed_by == "U1"
    two_admins = await asyncio.gather(
        store.suggestions.decide("s1", approve=True, by="ADMIN1", now=T0),
        store.suggestions.decide("s1", approve=False, by="ADMIN2", now=T0),
    )
    winners = [s for s in two_admins if s is not None]
    assert len(winners) == 1
    stored = await store.suggestions.get("s1")
    assert stored is not None
    assert (stored.status, stored.decided_by, stored.decided_at) == (
        winners[0].status, winners[0].decided_by, T0,
    )  # fmt: skip
    assert await store.suggestions.decide("s1", approve=True, by="ADMIN3") is None
    with pytest.raises(NotFoundError):
        await store.suggestions.decide("ghost", approve=True, by="ADMIN1")
    with pytest.raises(BadInputError):
        await store.suggestions.decide("s1", approve=True, by="")


async def test_suggestion_listing(store: Store) -> None:
    await store.suggestions.create(suggestion("s1", created_at=T0))
    await store.suggestions.create(suggestion("s2", created_at=T0 + timedelta(minutes=1)))
    await store.suggestions.create(suggestion("s3", created_at=T0 + timedelta(minutes=2)))
    await store.suggestions.decide("s2", approve=False, by="A")
    assert [s.id for s in await store.suggestions.list()] == ["s3", "s2", "s1"]
    assert [s.id for s in await store.suggestions.list(status="pending")] == ["s3", "s1"]
    assert [s.id for s in await store.suggestions.list(status="rejected")] == ["s2"]
    assert [s.id for s in await store.suggestions.list(limit=1)] == ["s3"]


def call(task: str, model: str, minute: int, **kw: object) -> LLMCallRecord:
    data = {"task": task, "model": model, "tier": "fast", "duration_ms": 100.0, "ok": True,
            "input_tokens": 1000, "output_tokens": 200, "cost_usd": 0.002,
            "occurred_at": T0 + timedelta(minutes=minute), **kw}  # fmt: skip
    return LLMCallRecord.model_validate(data)


async def test_llm_calls_idempotent_and_aggregated(store: Store) -> None:
    await store.llm_calls.add(
        call("extract", "haiku", 0, cache_read_input_tokens=500), call_id="e1"
    )
    await store.llm_calls.add(
        call("extract", "haiku", 0, cost_usd=99.0), call_id="e1"
    )  # redelivery
    await store.llm_calls.add(call("extract", "sonnet", 1, cost_usd=0.010), call_id="e2")
    await store.llm_calls.add(
        call("chat", "sonnet", 2, ok=False, error_msg="overloaded", output_tokens=0, cost_usd=0.0)
    )
    generated = await store.llm_calls.add(
        call("quiz", "haiku", 3, cache_creation_input_tokens=2048)
    )
    assert generated and await store.llm_calls.count() == 4

    last = await store.llm_calls.last(3)
    assert [c.task for c in last] == ["quiz", "chat", "extract"]
    assert last[0].id == generated and last[0].cache_creation_input_tokens == 2048
    assert last[1].ok is False and last[1].error_msg == "overloaded"
    assert last[0].occurred_at == T0 + timedelta(minutes=3)

    by_task = {a.key: a for a in await store.llm_calls.aggregate(by="task")}
    assert list(by_task) == ["extract", "quiz", "chat"]  # highest cost first
    extract = by_task["extract"]
    assert (extract.calls, extract.errors, extract.input_tokens, extract.output_tokens) == (
        2,
        0,
        2000,
        400,
    )
    assert extract.cache_read_input_tokens == 500
    assert extract.cost_usd == pytest.approx(0.012)
    assert extract.duration_ms_total == pytest.approx(200.0)
    assert by_task["chat"].errors == 1
    by_model = {
        a.key: (a.calls, round(a.cost_usd, 6)) for a in await store.llm_calls.aggregate(by="model")
    }
    assert by_model == {"sonnet": (2, 0.01), "haiku": (2, 0.004)}
    recent = await store.llm_calls.aggregate(by="task", since=T0 + timedelta(minutes=2))
    assert sorted(a.key for a in recent) == ["chat", "quiz"]
    with pytest.raises(BadInputError):
        await store.llm_calls.aggregate(by="tier")  # type: ignore[arg-type]


async def test_handbook_sync_and_curriculum(store: Store) -> None:
    await store.handbook_sync.put("values.md", "sha1")
    await store.handbook_sync.put("values.md", "sha2")
    await store.handbook_sync.put("roles/po.md", "sha3")
    state = await store.handbook_sync.get("values.md")
    assert state is not None and state.sha == "sha2" and state.updated_at is not None
    assert await store.handbook_sync.all() == {"roles/po.md": "sha3", "values.md": "sha2"}
    assert await store.handbook_sync.delete("values.md") is True
    assert await store.handbook_sync.get("values.md") is None

    await store.curriculum.set("2026-W10", "scrum")
    await store.curriculum.set("2026-W09", "okr")
    await store.curriculum.set("2026-W10", "holacracy")
    assert await store.curriculum.get("2026-W10") == "holacracy"
    assert [(e.week, e.topic_id) for e in await store.curriculum.all()] == [
        ("2026-W09", "okr"), ("2026-W10", "holacracy"),
    ]  # fmt: skip
    assert await store.curriculum.delete("2026-W09") is True
    assert await store.curriculum.get("2026-W09") is None
    with pytest.raises(BadInputError):
        await store.curriculum.set("2026-W99", "okr")
    with pytest.raises(BadInputError):
        await store.curriculum.set("2026-W11", "Not Kebab")
