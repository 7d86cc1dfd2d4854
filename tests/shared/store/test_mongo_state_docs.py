"""The MongoDB documents of the new collections, without a server: codecs round-trip and
no upsert filter uses $expr (the server refuses it: "not allowed ... for an upsert")."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from shared.store import (
    Assertion,
    ChatProposal,
    CustomTopic,
    FeedbackVote,
    Flag,
    IdempotencyRecord,
    Lease,
    MergeProgress,
    RelationKey,
    UploadMessage,
)
from shared.store.mongo import state_docs as docs
from shared.store.mongo.leases import acquire_update
from shared.store.mongo.provenance import assertion_doc, assertion_from_doc
from shared.store.mongo.state import progress_update

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def test_every_codec_round_trips() -> None:
    proposal = ChatProposal(id="p1", delta={"reason": "r"}, proposed_by="U1", created_at=T0)
    assert docs.proposal_from_doc(docs.proposal_doc(proposal)) == proposal
    vote = FeedbackVote(turn_id="t|1", user="29:a:b", value="down", topic_ids=["okr"],
                        created_at=T0, updated_at=T0)  # fmt: skip
    vote_doc = docs.vote_doc(vote)
    assert vote_doc["_id"] == {"turn": "t|1", "user": "29:a:b"} and vote_doc["week"] == "2026-W10"
    assert docs.vote_from_doc(vote_doc) == vote
    upload = UploadMessage(source_id="s1", channel="D1", ts="1.2", created_at=T0)
    back = docs.upload_from_doc(docs.upload_doc(upload))
    assert (back.source_id, back.channel, back.created_at) == ("s1", "D1", T0)
    progress = MergeProgress(source_id="s1", topics_added=2, changed_ids=["a"])
    assert docs.progress_from_doc(docs.progress_doc(progress)) == progress
    record = IdempotencyRecord(scope="c", key="k", value={"ok": True}, created_at=T0, expires_at=T0)
    assert docs.idempotency_from_doc(docs.idempotency_doc(record)) == record
    topic = CustomTopic(id="okr", label="OKR", created_at=T0)
    assert docs.custom_topic_from_doc(docs.custom_topic_doc(topic)) == topic
    flag = Flag(name="f", value={"n": 1}, updated_at=T0)
    assert docs.flag_from_doc(docs.flag_doc(flag)) == flag
    lease = Lease(name="l", owner="o", acquired_at=T0, expires_at=T0)
    assert docs.lease_from_doc(docs.lease_doc(lease)) == lease
    for assertion in (
        Assertion(source_id="s", chunk_index=2, topic_id="okr", version="v", asserted_at=T0),
        Assertion(source_id="s", relation=RelationKey(source="a", target="b", type="part_of"),
                  asserted_at=T0),
    ):  # fmt: skip
        assert assertion_from_doc(assertion_doc(assertion, T0)) == assertion


def _mentions(value: Any, needle: str) -> bool:
    return needle in json.dumps(value, default=str)


def test_the_lease_decision_lives_in_the_update_and_quotes_the_owner() -> None:
    update = acquire_update("$owner-like", 30_000)
    stage = update[0]["$set"]
    assert set(stage) == {"owner", "acquired_at", "expires_at"}
    assert _mentions(update, "$$NOW")  # the server's clock, not this process's
    assert {"$literal": "$owner-like"} in stage["owner"]["$cond"]  # never read as a field path


def test_progress_update_appends_unseen_ids_capped() -> None:
    update = progress_update(
        {"topics_added": 1, "topics_updated": 0, "relations_added": 2, "relations_dropped": 0},
        ["a", "b"],
        500,
    )
    stage = update[0]["$set"]
    assert stage["changed_ids"]["$slice"][1] == 500
    assert stage["topics_added"] == {"$add": [{"$ifNull": ["$topics_added", 0]}, 1]}
