"""Contract: proposals, feedback, upload messages, merge progress, custom topics and flags."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from shared.errors import BadInputError
from shared.store import ChatProposal, CustomTopic, FeedbackVote, Store, UploadMessage

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # a Monday, ISO week 2026-W10
DELTA = {"reason": "r", "topics": [{"id": "okr", "label": "OKR", "type": "concept"}]}


def proposal(pid: str, **kw: object) -> ChatProposal:
    return ChatProposal.model_validate({"id": pid, "delta": DELTA, "proposed_by": "U1", **kw})


async def test_proposal_is_decided_once_and_reopened_only_by_its_decision(store: Store) -> None:
    created = await store.proposals.create(proposal("p1", summary="Nieuw: OKR", created_at=T0))
    assert (created.status, created.summary, created.created_at) == ("open", "Nieuw: OKR", T0)
    again = await store.proposals.create(proposal("p1", proposed_by="U9"))
    assert again.proposed_by == "U1"  # an existing id is returned unchanged
    racing = await asyncio.gather(
        store.proposals.decide("p1", status="applied", by="ADMIN", suggestion_id="r42-p1", now=T0),
        store.proposals.decide("p1", status="declined", by="U1", now=T0),
    )
    winners = [p for p in racing if p is not None]
    assert len(winners) == 1 and winners[0].decision_token
    stored = await store.proposals.get("p1")
    assert stored is not None and stored.status == winners[0].status
    assert stored.decided_at == T0 and stored.decision_token == winners[0].decision_token
    assert await store.proposals.decide("p1", status="declined", by="U1") is None
    assert not await store.proposals.reopen("p1", decision_token="not-the-token")
    assert await store.proposals.reopen("p1", decision_token=winners[0].decision_token or "")
    reopened = await store.proposals.get("p1")
    assert reopened is not None
    assert (reopened.status, reopened.decided_by, reopened.decision_token) == ("open", None, None)
    assert await store.proposals.decide("missing", status="declined", by="U1") is None
    with pytest.raises(BadInputError, match="applied, pending_review, declined"):
        await store.proposals.decide("p1", status="open", by="U1")  # type: ignore[arg-type]
    await store.proposals.create(proposal("p2", created_at=T0 + timedelta(hours=1)))
    assert [p.id for p in await store.proposals.list()] == ["p2", "p1"]
    assert [p.id for p in await store.proposals.list(status="open", limit=1)] == ["p2"]


def vote(turn: str, user: str, value: str, topics: list[str], **kw: object) -> FeedbackVote:
    return FeedbackVote.model_validate(
        {"turn_id": turn, "user": user, "value": value, "topic_ids": topics, **kw}
    )


async def test_feedback_last_click_counts_and_rates_per_topic_and_week(store: Store) -> None:
    week2 = T0 + timedelta(days=7)
    first = await store.feedback.record(
        vote("t1", "U1", "up", ["okr", "scrum"], question="Wat is OKR?", answer="…",
             model="claude-x", prompt_version="r42-v3", conversation="D1", surface="slack"),
        now=T0,
    )  # fmt: skip
    assert first.created_at == T0 and first.updated_at == T0
    changed = await store.feedback.record(
        vote("t1", "U1", "down", ["okr", "scrum"], reason="klopt niet"), now=T0 + timedelta(hours=2)
    )
    assert (changed.value, changed.reason, changed.created_at) == ("down", "klopt niet", T0)
    assert changed.updated_at == T0 + timedelta(hours=2)
    await store.feedback.record(vote("t1", "U2", "up", ["okr", "scrum"]), now=T0)
    await store.feedback.record(vote("t2", "U1", "down", []), now=T0)  # R42 found nothing
    await store.feedback.record(vote("t3", "U1", "up", ["okr"]), now=week2)
    stored = await store.feedback.get("t1", "U1")
    assert stored is not None and stored.question == "" and stored.value == "down"
    rates = [(r.topic_id, r.week, r.up, r.down) for r in await store.feedback.rates()]
    assert rates == [
        (None, "2026-W10", 0, 1),
        ("okr", "2026-W10", 1, 1),
        ("scrum", "2026-W10", 1, 1),
        ("okr", "2026-W11", 1, 0),
    ]
    later = await store.feedback.rates(since=week2)
    assert [(r.topic_id, r.week, r.total) for r in later] == [("okr", "2026-W11", 1)]
    gaps = await store.feedback.list(value="down")
    assert {(v.turn_id, v.user) for v in gaps} == {("t1", "U1"), ("t2", "U1")}
    assert [v.turn_id for v in await store.feedback.list(until=week2, limit=10)][-1] in {"t1", "t2"}
    assert [v.turn_id for v in await store.feedback.list(since=week2)] == ["t3"]
    assert await store.feedback.get("t9", "U1") is None


async def test_feedback_rejects_bad_votes() -> None:
    with pytest.raises(ValueError):
        vote("t1", "U1", "meh", [])
    with pytest.raises(ValueError):
        vote("", "U1", "up", [])


async def test_upload_message_finishes_once(store: Store) -> None:
    await store.upload_messages.put(UploadMessage(source_id="s1", channel="D1", ts="1.2", name="a"))
    got = await store.upload_messages.get("s1")
    assert got is not None and (got.channel, got.ts, got.final, got.outcome) == (
        "D1",
        "1.2",
        False,
        None,
    )
    done = await asyncio.gather(
        store.upload_messages.finish("s1", {"state": "completed"}),
        store.upload_messages.finish("s1", {"state": "failed"}),
    )
    finished = [m for m in done if m is not None]
    assert len(finished) == 1 and finished[0].final
    stored = await store.upload_messages.get("s1")
    assert stored is not None and stored.outcome == finished[0].outcome
    assert await store.upload_messages.finish("missing", {}) is None
    assert await store.upload_messages.delete("s1") is True
    assert await store.upload_messages.get("s1") is None


async def test_merge_progress_adds_atomically(store: Store) -> None:
    empty = await store.merge_progress.get("s1")
    assert (empty.topics_added, empty.changed_ids) == (0, [])
    await asyncio.gather(
        *(
            store.merge_progress.add(
                "s1", changed_ids=[f"t{i}", "shared"], topics_added=1, relations_added=2
            )
            for i in range(10)
        )
    )
    progress = await store.merge_progress.get("s1")
    assert (progress.topics_added, progress.relations_added, progress.topics_updated) == (10, 20, 0)
    assert sorted(progress.changed_ids) == sorted({f"t{i}" for i in range(10)} | {"shared"})
    capped = await store.merge_progress.add(
        "s2", changed_ids=["a", "b", "a", "c"], max_changed_ids=2
    )
    assert capped.changed_ids == ["a", "b"]
    ordered = await store.merge_progress.add("s3", changed_ids=["z", "y", "z"])
    assert (await store.merge_progress.add("s3", changed_ids=["x", "y"])).changed_ids == [
        "z",
        "y",
        "x",
    ]
    assert ordered.changed_ids == ["z", "y"]
    with pytest.raises(BadInputError):
        await store.merge_progress.add("s1", topics_added=-1)
    assert await store.merge_progress.delete("s1") is True
    assert (await store.merge_progress.get("s1")).topics_added == 0


async def test_custom_topics_take_an_id_once(store: Store) -> None:
    topic = CustomTopic(id="okr", label="OKR", requested_as="okrs", requested_by="U1", offline=True)
    results = await asyncio.gather(store.custom_topics.add(topic), store.custom_topics.add(topic))
    assert sorted(results) == [False, True]
    await store.custom_topics.add(CustomTopic(id="agile", label="Agile", type="process"))
    assert await store.custom_topics.ids() == {"okr", "agile"}
    assert [t.id for t in await store.custom_topics.list()] == ["agile", "okr"]
    got = await store.custom_topics.get("okr")
    assert got is not None and got.offline and got.requested_by == "U1" and got.created_at
    assert await store.custom_topics.delete("okr") is True
    assert await store.custom_topics.get("okr") is None


async def test_flags(store: Store) -> None:
    assert await store.flags.get("extractor.sample_handbook") is None
    racing = await asyncio.gather(
        *(store.flags.set_if_absent("extractor.sample_handbook", {"n": i}) for i in range(5))
    )
    assert racing.count(True) == 1
    flag = await store.flags.get("extractor.sample_handbook")
    assert flag is not None and flag.value == {"n": racing.index(True)}
    await store.flags.set("extractor.sample_handbook", {"published": 3})
    flag = await store.flags.get("extractor.sample_handbook")
    assert flag is not None and flag.value == {"published": 3}
    assert await store.flags.delete("extractor.sample_handbook") is True
    assert await store.flags.delete("extractor.sample_handbook") is False
    with pytest.raises(BadInputError):
        await store.flags.set(" ")
