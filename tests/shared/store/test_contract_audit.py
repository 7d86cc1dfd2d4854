"""Contract: the audit trail keeps every admin action, newest first, and rejects bad entries."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from shared.errors import BadInputError
from shared.store import AuditEntry, Store

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def entry(i: int, **kw: object) -> AuditEntry:
    fields: dict[str, object] = {
        "actor": "UADMIN",
        "action": "topic.edit",
        "target": f"topic-{i}",
        "allowed": True,
        "before": {"learning_relevance": "standard", "locked": False},
        "after": {"learning_relevance": "core", "locked": True, "n": i},
        "at": T0 + timedelta(seconds=i),
        "surface": "slack",
    }
    fields.update(kw)
    return AuditEntry.model_validate(fields)


async def test_latest_is_newest_first_and_round_trips(store: Store) -> None:
    for i in (2, 0, 1):
        await store.audit.record(entry(i))
    refused = entry(3, actor="UEVE", allowed=False, after=None, before=None, surface="cli")
    await store.audit.record(refused)
    got = await store.audit.latest()
    assert [e.target for e in got] == ["topic-3", "topic-2", "topic-1", "topic-0"]
    assert got[0] == refused
    assert got[1] == entry(2)
    assert got[1].at == T0 + timedelta(seconds=2) and got[1].at.tzinfo is not None
    assert [e.target for e in await store.audit.latest(limit=2)] == ["topic-3", "topic-2"]
    assert await store.audit.latest(actor="UEVE") == [refused]
    assert await store.audit.latest(actor="UNOBODY") == []


async def test_same_instant_keeps_insertion_order(store: Store) -> None:
    for i in range(5):
        await store.audit.record(entry(0, target=f"t{i}"))
    assert [e.target for e in await store.audit.latest()] == ["t4", "t3", "t2", "t1", "t0"]


async def test_concurrent_records_are_all_kept(store: Store) -> None:
    await asyncio.gather(*(store.audit.record(entry(i)) for i in range(20)))
    assert len(await store.audit.latest(limit=100)) == 20


async def test_nested_before_after_survive(store: Store) -> None:
    nested = {"relations": [{"source": "a", "target": "b", "type": "part_of"}], "none": None}
    await store.audit.record(entry(1, before=nested, after={"deleted": True}))
    (got,) = await store.audit.latest()
    assert got.before == nested and got.after == {"deleted": True}


@pytest.mark.parametrize("limit", [0, -1, 501, True])
async def test_bad_limit_is_refused(store: Store, limit: int) -> None:
    with pytest.raises(BadInputError, match="limit"):
        await store.audit.latest(limit=limit)


async def test_bad_entries_are_refused_and_nothing_stored(store: Store) -> None:
    forged = AuditEntry.model_construct(**{**entry(1).model_dump(), "surface": "fax"})
    with pytest.raises(BadInputError, match="surface"):
        await store.audit.record(forged)
    unserialisable = AuditEntry.model_construct(
        **{**entry(1).model_dump(), "after": {"x": object()}}
    )
    with pytest.raises(BadInputError):
        await store.audit.record(unserialisable)
    with pytest.raises(BadInputError, match="AuditEntry"):
        await store.audit.record({"actor": "U1"})  # type: ignore[arg-type]
    assert await store.audit.latest() == []


def test_entry_model_rules() -> None:
    with pytest.raises(ValidationError):
        entry(1, action="Topic Edit")
    with pytest.raises(ValidationError):
        entry(1, actor="  ")
    with pytest.raises(ValidationError):
        entry(1, surface="email")
    with pytest.raises(ValidationError):
        entry(1, extra_field=1)
    naive = entry(1, at=datetime(2026, 3, 2, 9, 0, 0, 123456))
    assert naive.at == datetime(2026, 3, 2, 9, 0, 0, 123000, tzinfo=UTC)
