"""Pure builders of MongoDB documents, filters, updates and pipelines (no server needed)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pymongo import ASCENDING, DESCENDING, IndexModel, UpdateOne

from shared.store._common import normalise_time
from shared.store.models import Relation, RelationKey, Topic

DEFAULT_DATABASE = "r42"


def with_database(url: str, database: str) -> str:
    """The same MongoDB URL with its database path replaced (options and credentials kept)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{database}", parts.query, parts.fragment))


def database_name(url: str) -> str:
    """The database named in a MongoDB URL's path, or the default."""
    return urlsplit(url).path.lstrip("/") or DEFAULT_DATABASE


def supports_transactions(hello: Mapping[str, Any]) -> bool:
    """Whether a `hello` reply describes a replica set member or mongos (transactions work)."""
    return bool(hello.get("setName")) or hello.get("msg") == "isdbgrid"


def relation_id(key: RelationKey | tuple[str, str, str]) -> str:
    """The _id of a relation document; kebab-case ids never contain '|'."""
    source, target, type_ = key.as_tuple() if isinstance(key, RelationKey) else key
    return f"{source}|{target}|{type_}"


def _literal(value: Any) -> dict[str, Any]:
    # Inside a pipeline update a string starting with "$" would be read as a field path.
    return {"$literal": value}


def topic_upsert(topic: Topic, now: datetime) -> UpdateOne:
    """An upsert that keeps created_at and an admin-locked relevance (pipeline update)."""
    created = normalise_time(topic.created_at) if topic.created_at else now
    keep_locked = {
        "$and": [{"$eq": ["$relevance_locked", True]}, {"$not": [topic.relevance_locked]}]
    }
    stage = {
        "label": _literal(topic.label),
        "type": _literal(topic.type),
        "description": _literal(topic.description),
        "metadata": _literal(topic.metadata.model_dump(exclude_none=True)),
        "created_at": {"$ifNull": ["$created_at", _literal(created)]},
        "updated_at": _literal(now),
        "learning_relevance": {
            "$cond": [keep_locked, "$learning_relevance", _literal(topic.learning_relevance)]
        },
        "relevance_locked": {"$or": [{"$eq": ["$relevance_locked", True]}, topic.relevance_locked]},
    }
    return UpdateOne({"_id": topic.id}, [{"$set": stage}], upsert=True)


def topic_from_doc(doc: Mapping[str, Any]) -> Topic:
    """A Topic from its document."""
    return Topic.model_validate(
        {
            "id": doc["_id"],
            "label": doc["label"],
            "type": doc["type"],
            "description": doc.get("description", ""),
            "learning_relevance": doc.get("learning_relevance", "standard"),
            "relevance_locked": bool(doc.get("relevance_locked", False)),
            "metadata": doc.get("metadata") or {},
            "created_at": doc.get("created_at"),
            "updated_at": doc.get("updated_at"),
        }
    )


def relation_upsert(relation: Relation) -> UpdateOne:
    """An upsert of one relation keyed by its (source, target, type) _id."""
    doc = {
        "source": relation.source,
        "target": relation.target,
        "type": relation.type,
        "description": relation.description,
    }
    return UpdateOne({"_id": relation_id(relation.key)}, {"$set": doc}, upsert=True)


def relation_from_doc(doc: Mapping[str, Any]) -> Relation:
    """A Relation from its document."""
    return Relation(
        source=doc["source"],
        target=doc["target"],
        type=doc["type"],
        description=doc.get("description"),
    )


def missing_endpoints(
    relations: Iterable[Relation],
    *,
    upserted: set[str],
    deleted: set[str],
    existing: set[str],
) -> list[str]:
    """Endpoint ids that will not be topics once a change is applied."""
    present = upserted | (existing - deleted)
    referenced = {r.source for r in relations} | {r.target for r in relations}
    return sorted(referenced - present)


def touching(topic_ids: list[str]) -> dict[str, Any]:
    """A filter for relations with either endpoint among topic_ids."""
    return {"$or": [{"source": {"$in": topic_ids}}, {"target": {"$in": topic_ids}}]}


def count_by(field: str) -> list[dict[str, Any]]:
    """A pipeline counting documents per value of field."""
    return [{"$group": {"_id": f"${field}", "n": {"$sum": 1}}}]


def all_time_leaderboard(limit: int) -> list[dict[str, Any]]:
    """A pipeline summing each user's weekly points, points desc then user."""
    return [
        {"$group": {"_id": "$user", "points": {"$sum": "$points"}}},
        {"$sort": {"points": DESCENDING, "_id": ASCENDING}},
        {"$limit": limit},
    ]


def call_aggregate(by: str, since: datetime | None) -> list[dict[str, Any]]:
    """A pipeline of LLM call totals per task or model, highest cost first."""
    match: dict[str, Any] = {"occurred_at": {"$gte": since}} if since else {}
    return [
        {"$match": match},
        {
            "$group": {
                "_id": f"${by}",
                "calls": {"$sum": 1},
                "errors": {"$sum": {"$cond": ["$ok", 0, 1]}},
                "input_tokens": {"$sum": "$input_tokens"},
                "output_tokens": {"$sum": "$output_tokens"},
                "cache_creation_input_tokens": {"$sum": "$cache_creation_input_tokens"},
                "cache_read_input_tokens": {"$sum": "$cache_read_input_tokens"},
                "cost_usd": {"$sum": "$cost_usd"},
                "duration_ms_total": {"$sum": "$duration_ms"},
            }
        },
        {"$sort": {"cost_usd": DESCENDING, "_id": ASCENDING}},
    ]


def score_id(user: str, week: str) -> str:
    """The _id of a user's weekly score."""
    return f"{week}|{user}"


def chunk_id(source_id: str, chunk_index: int) -> str:
    """The _id of a chunk merge record."""
    return f"{source_id}#{chunk_index}"


def indexes() -> dict[str, list[IndexModel]]:
    """Every secondary index, created (idempotently) when the store opens."""
    return {
        "topics": [
            IndexModel([("type", ASCENDING)]),
            IndexModel([("learning_relevance", ASCENDING)]),
            IndexModel([("updated_at", DESCENDING)]),
        ],
        "assertions": [
            IndexModel([("source_id", ASCENDING), ("version", ASCENDING)]),
            IndexModel([("kind", ASCENDING), ("subject", ASCENDING)]),
        ],
        "topic_curation": [IndexModel([("topic_id", ASCENDING)])],
        "change_log": [IndexModel([("created_at", DESCENDING)])],
        "conversation_refs": [
            IndexModel([("surface", ASCENDING), ("user_id", ASCENDING), ("updated_at", DESCENDING)])
        ],
        "relations": [
            IndexModel(
                [("source", ASCENDING), ("target", ASCENDING), ("type", ASCENDING)],
                unique=True,
                name="relation_key",
            ),
            IndexModel([("target", ASCENDING)]),
        ],
        "sources": [
            IndexModel([("sha256", ASCENDING)]),
            IndexModel([("status", ASCENDING)]),
            IndexModel([("created_at", DESCENDING)]),
        ],
        "source_chunks": [
            IndexModel([("source_id", ASCENDING), ("chunk_index", ASCENDING)], unique=True)
        ],
        "content": [IndexModel([("stale", ASCENDING)])],
        "quiz_attempts": [
            IndexModel([("user", ASCENDING), ("started_at", DESCENDING)]),
            IndexModel([("status", ASCENDING), ("expires_at", ASCENDING)]),
            # At most one active attempt per user, enforced by the server.
            IndexModel(
                [("user", ASCENDING)],
                unique=True,
                partialFilterExpression={"status": "active"},
                name="one_active_attempt",
            ),
        ],
        "scores": [
            IndexModel([("user", ASCENDING), ("week", ASCENDING)], unique=True),
            IndexModel([("week", ASCENDING), ("points", DESCENDING)]),
        ],
        "suggestions": [IndexModel([("status", ASCENDING), ("created_at", DESCENDING)])],
        "llm_calls": [IndexModel([("occurred_at", DESCENDING)])],
        "proposals": [IndexModel([("status", ASCENDING), ("created_at", DESCENDING)])],
        "feedback": [IndexModel([("created_at", DESCENDING)])],
        # The server deletes expired keys in the background; reads also filter on expiry.
        "idempotency_keys": [IndexModel([("expires_at", ASCENDING)], expireAfterSeconds=0)],
        "turns": [IndexModel([("expires_at", ASCENDING)], expireAfterSeconds=0)],
    }
