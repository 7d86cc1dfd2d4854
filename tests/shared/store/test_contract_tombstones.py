"""Contract of the tombstone repository (topics an admin deleted)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from shared.store import Store, Tombstone


async def test_tombstones_record_who_and_when_count_skips_and_lift(store: Store) -> None:
    repo = store.tombstones
    early = datetime(2026, 1, 1, tzinfo=UTC)
    first = await repo.add(Tombstone(topic_id="a", label="A", deleted_by="U1", undo_id="undo-1",
                                     deleted_at=early))  # fmt: skip
    assert first.deleted_at == early
    second = await repo.add(Tombstone(topic_id="b", label="B", deleted_by="U2"))
    assert second.deleted_at is not None and second.deleted_at > early - timedelta(days=1)
    assert [t.topic_id for t in await repo.list()] == ["b", "a"]  # newest first
    assert set(await repo.get_many(["a", "b", "c"])) == {"a", "b"}
    assert await repo.get_many([]) == {}

    await repo.count_skips(["a", "c"], asserter="src-1")
    await repo.count_skips(["a"], asserter="src-2")
    got = (await repo.get_many(["a"]))["a"]
    assert (got.skipped, got.last_asserter, got.deleted_by, got.undo_id) == (
        2, "src-2", "U1", "undo-1"
    )  # fmt: skip
    assert (await repo.get_many(["b"]))["b"].skipped == 0

    again = await repo.add(Tombstone(topic_id="a", label="A2", deleted_by="U3"))  # deleted again
    assert (again.label, again.deleted_by, again.skipped) == ("A2", "U3", 0)
    assert await repo.remove(["a", "c"]) == 1
    assert await repo.remove([]) == 0
    assert [t.topic_id for t in await repo.list(limit=10)] == ["b"]
