"""The MongoDB adapter without a server: construction, query builders, error translation.

The behaviour of the adapter is covered by the contract suite whenever a MongoDB server
is reachable (R42_TEST_MONGODB_URL or Docker); these tests run everywhere.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pymongo import UpdateOne
from pymongo.errors import DuplicateKeyError, OperationFailure, ServerSelectionTimeoutError

from shared.errors import ConfigError, StoreError, StoreUnavailableError
from shared.store import QuizAttempt, Relation, Topic, TopicMetadata
from shared.store.mongo import MongoStore, database_name, supports_transactions, with_database
from shared.store.mongo.client import mongo_errors, translate
from shared.store.mongo.queries import (
    all_time_leaderboard,
    call_aggregate,
    indexes,
    missing_endpoints,
    relation_from_doc,
    relation_id,
    relation_upsert,
    topic_from_doc,
    topic_upsert,
    touching,
)
from shared.store.mongo.quiz import attempt_doc, attempt_from_doc

NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def test_database_in_url() -> None:
    url = "mongodb://u:p@h1:27017,h2:27017/?replicaSet=rs0&authSource=admin"
    assert database_name(url) == "r42"
    named = with_database(url, "r42_test_1")
    assert named == "mongodb://u:p@h1:27017,h2:27017/r42_test_1?replicaSet=rs0&authSource=admin"
    assert database_name(named) == "r42_test_1"
    assert database_name("mongodb+srv://cluster.example.com/prod") == "prod"


def test_transactions_detected_from_hello() -> None:
    assert supports_transactions({"isWritablePrimary": True, "setName": "rs0"})
    assert supports_transactions({"isWritablePrimary": True, "msg": "isdbgrid"})
    assert not supports_transactions({"isWritablePrimary": True})


async def test_store_constructs_without_a_server() -> None:
    store = MongoStore("mongodb://127.0.0.1:1/r42_unit", timeout_ms=200)
    try:
        assert store.backend == "mongodb"
        assert store.db.db.name == "r42_unit"
        assert store.transactions is False
        for name in ("topics", "relations", "sources", "source_texts", "content", "quiz_banks",
                     "quiz_attempts", "scores", "threads", "suggestions", "llm_calls",
                     "handbook_sync", "curriculum", "proposals", "feedback",
                     "upload_messages", "merge_progress", "idempotency", "custom_topics",
                     "flags", "locks", "provenance", "curation", "change_log", "held_changes",
                     "handbook_trees", "kb_version", "current_sources",
                     "conversation_refs"):  # fmt: skip
            assert hasattr(store, name), name
    finally:
        await store.close()


async def test_unreachable_server_is_a_transient_error_without_secrets() -> None:
    with pytest.raises(StoreUnavailableError) as info:
        await MongoStore.open("mongodb://admin:s3cret@127.0.0.1:1/r42", timeout_ms=200)
    assert info.value.transient
    assert "s3cret" not in str(info.value)


async def test_invalid_mongodb_url_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        await MongoStore.open("mongodb://", timeout_ms=200)


def test_error_translation() -> None:
    assert isinstance(translate(ServerSelectionTimeoutError("x")), StoreUnavailableError)
    transient = OperationFailure(
        "conflict", code=112, details={"errorLabels": ["TransientTransactionError"]}
    )
    assert isinstance(translate(transient), StoreUnavailableError)
    assert type(translate(OperationFailure("bad", code=2))) is StoreError


async def test_mongo_errors_decorator_wraps_public_coroutines() -> None:
    @mongo_errors
    class Repo:
        async def public(self) -> None:
            raise DuplicateKeyError("E11000 dup")

        async def _private(self) -> None:
            raise DuplicateKeyError("E11000 dup")

    with pytest.raises(StoreError):
        await Repo().public()
    with pytest.raises(DuplicateKeyError):
        await Repo()._private()


def test_topic_upsert_is_a_pipeline_with_literal_values() -> None:
    topic = Topic(id="budget", label="$ budget", type="concept", description="$total costs",
                  metadata=TopicMetadata(source="$x"), relevance_locked=True)  # fmt: skip
    op = topic_upsert(topic, NOW)
    assert isinstance(op, UpdateOne)
    doc = op._doc  # the update document pymongo will send
    assert isinstance(doc, list) and list(doc[0]) == ["$set"]
    stage = doc[0]["$set"]
    # Strings that start with '$' must never be read as field paths.
    assert stage["label"] == {"$literal": "$ budget"}
    assert stage["description"] == {"$literal": "$total costs"}
    assert stage["metadata"] == {"$literal": {"source": "$x"}}
    assert stage["created_at"] == {"$ifNull": ["$created_at", {"$literal": NOW}]}
    assert stage["relevance_locked"] == {"$or": [{"$eq": ["$relevance_locked", True]}, True]}
    assert op._filter == {"_id": "budget"} and op._upsert is True


def test_topic_and_relation_documents_round_trip() -> None:
    doc = {"_id": "okr", "label": "OKR", "type": "concept", "metadata": {"source": "s"},
           "created_at": NOW, "updated_at": NOW}  # fmt: skip
    topic = topic_from_doc(doc)
    assert (topic.id, topic.relevance_locked, topic.learning_relevance) == (
        "okr",
        False,
        "standard",
    )
    relation = Relation(source="a", target="b", type="part_of", description="d")
    op = relation_upsert(relation)
    assert op._filter == {"_id": "a|b|part_of"} == {"_id": relation_id(relation.key)}
    assert relation_from_doc(op._doc["$set"]) == relation


def test_missing_endpoints_account_for_the_whole_change() -> None:
    relations = [Relation(source="a", target="b", type="related_to"),
                 Relation(source="c", target="d", type="related_to")]  # fmt: skip
    assert missing_endpoints(
        relations, upserted={"c"}, deleted={"b"}, existing={"a", "b", "d"}
    ) == ["b"]
    assert (
        missing_endpoints(relations, upserted={"b", "c"}, deleted=set(), existing={"a", "d"}) == []
    )
    assert touching(["x"]) == {"$or": [{"source": {"$in": ["x"]}}, {"target": {"$in": ["x"]}}]}


def test_pipelines() -> None:
    board = all_time_leaderboard(5)
    assert board[0] == {"$group": {"_id": "$user", "points": {"$sum": "$points"}}}
    assert board[1] == {"$sort": {"points": -1, "_id": 1}} and board[2] == {"$limit": 5}
    calls = call_aggregate("model", NOW)
    assert calls[0] == {"$match": {"occurred_at": {"$gte": NOW}}}
    assert calls[1]["$group"]["_id"] == "$model"
    assert calls[1]["$group"]["errors"] == {"$sum": {"$cond": ["$ok", 0, 1]}}
    assert call_aggregate("task", None)[0] == {"$match": {}}


def test_record_documents_read_back() -> None:
    from shared.store import ChangeBatch, ConversationRef, HeldChange, KbChanges, Topic
    from shared.store.mongo.records import _held, _ref, held_doc, ref_doc
    from shared.store.mongo.undo import _batch, batch_doc

    okr = Topic(id="okr", label="OKR", type="concept")
    held = HeldChange(key="src-1:3", asserter="src-1", changes=KbChanges(topics_upsert=[okr]),
                      topics=["okr"])  # fmt: skip
    doc = held_doc(held)
    assert doc["_id"] == "src-1:3" and doc["created_at"] is not None
    assert _held(doc).model_dump(exclude={"created_at"}) == held.model_dump(exclude={"created_at"})
    ref = ConversationRef(surface="teams", conversation_id="a:1", reference={"x": 1}, user_id="u")
    assert ref_doc(ref)["_id"] == "teams|a:1"
    assert _ref(ref_doc(ref)).model_dump(exclude={"updated_at"}) == ref.model_dump(
        exclude={"updated_at"}
    )
    batch = ChangeBatch(id="undo-1", actor="extractor", topics_before=[okr], topics_absent=["n"])
    stored = batch_doc(batch)
    assert stored["applied"] is True and set(stored["before"]) >= {"topics_before"}
    back = _batch(stored)
    assert back.topics_before == [okr] and back.topics_absent == ["n"]


def test_indexes_enforce_the_uniqueness_rules() -> None:
    specs = {name: [m.document for m in models] for name, models in indexes().items()}
    relation_key = next(d for d in specs["relations"] if d.get("unique"))
    assert list(relation_key["key"]) == ["source", "target", "type"]
    active = next(d for d in specs["quiz_attempts"] if d.get("unique"))
    assert active["partialFilterExpression"] == {"status": "active"}
    assert any(d.get("unique") for d in specs["scores"])
    assert any(d.get("unique") for d in specs["source_chunks"])


def test_attempt_documents_round_trip() -> None:
    attempt = QuizAttempt.model_validate(
        {
            "id": "a1",
            "user": "U1",
            "week": "2026-W10",
            "question_keys": ["q0", "q1"],
            "answers": {1: {"choice": 2, "correct": True, "points": 10, "answered_at": NOW}},
            "started_at": NOW,
            "last_activity_at": NOW,
            "expires_at": NOW,
        }
    )
    doc = attempt_doc(attempt)
    assert doc["_id"] == "a1" and set(doc["answers"]) == {"1"}  # BSON keys are strings
    assert attempt_from_doc(doc) == attempt
