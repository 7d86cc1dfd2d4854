"""Versioned, forward-only MongoDB migrations, applied at start-up.

Every step is idempotent, so several processes starting at once may run the same step;
the `schema_version` collection records each version once (its _id is the version).
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from shared.errors import StoreError
from shared.store._common import normalise_question_key, utcnow
from shared.store.migration_order import must_apply
from shared.store.mongo.audit import audit_indexes
from shared.store.mongo.client import DuplicateKeyError, MongoDb
from shared.store.mongo.migrate_records import move_records
from shared.store.mongo.migrate_state import move_settings, state_indexes
from shared.store.mongo.pending import pending_collections
from shared.store.mongo.queries import indexes, relation_id
from shared.store.mongo.tombstones import tombstone_indexes
from shared.store.mongo.turns import turns_kb_miss


async def _indexes(db: MongoDb) -> None:
    for name, models in indexes().items():
        await db[name].create_indexes(models)


async def _relevance_locked(db: MongoDb) -> None:
    await db["topics"].update_many(
        {"relevance_locked": {"$exists": False}}, {"$set": {"relevance_locked": False}}
    )


async def _relation_vocabulary(db: MongoDb) -> None:
    relations = db["relations"]
    legacy = [doc async for doc in relations.find({"type": "executes"})]
    for doc in legacy:
        source, target = doc["target"], doc["source"]
        if source != target:
            # $setOnInsert: an existing swapped relation wins, which deduplicates.
            await relations.update_one(
                {"_id": relation_id((source, target, "executed_by"))},
                {
                    "$setOnInsert": {
                        "source": source,
                        "target": target,
                        "type": "executed_by",
                        "description": doc.get("description"),
                    }
                },
                upsert=True,
            )
        await relations.delete_one({"_id": doc["_id"]})


async def _question_difficulty(db: MongoDb) -> None:
    banks = db["quiz_banks"]
    query = {
        "questions": {
            "$elemMatch": {"$or": [{"difficulty": {"$exists": False}}, {"key": {"$exists": False}}]}
        }
    }
    async for bank in banks.find(query):
        original = bank.get("questions", [])
        questions = copy.deepcopy(original)
        for question in questions:
            question.setdefault("difficulty", "medium")
            if not question.get("key"):
                question["key"] = normalise_question_key(question.get("text", ""))
        # Guarded by the array read, so a concurrent add is never overwritten.
        await banks.update_one(
            {"_id": bank["_id"], "questions": original}, {"$set": {"questions": questions}}
        )


@dataclass(frozen=True)
class MongoMigration:
    """One forward-only step."""

    version: int
    description: str
    apply: Callable[[MongoDb], Awaitable[None]]


MIGRATIONS: tuple[MongoMigration, ...] = (
    MongoMigration(1, "indexes (unique topic id, relation key, one active attempt, …)", _indexes),
    MongoMigration(2, "topics.relevance_locked, default false", _relevance_locked),
    MongoMigration(3, "relation type executes -> executed_by", _relation_vocabulary),
    MongoMigration(4, "quiz questions without difficulty become medium", _question_difficulty),
    MongoMigration(
        5, "collections of proposals, feedback, uploads, keys, flags, locks", state_indexes
    ),
    MongoMigration(6, "settings documents move into their own collections", move_settings),
    MongoMigration(
        7, "assertions, topic curation, change log; topics by updated_at", state_indexes
    ),
    MongoMigration(8, "settings turn documents move into turns", move_settings),
    MongoMigration(
        9,
        "the last settings documents move into their collections; settings dropped",
        move_records,
    ),
    MongoMigration(10, "audit trail of admin actions", audit_indexes),
    MongoMigration(12, "held chunk results and pending relations", pending_collections),
    MongoMigration(13, "tombstones of topics an admin deleted", tombstone_indexes),
    MongoMigration(15, "turns.kb_miss (earlier turns: from R42's fixed wording)", turns_kb_miss),
)
LATEST_VERSION = MIGRATIONS[-1].version


async def current_version(db: MongoDb) -> int:
    """The highest applied version (0 for a new or legacy database)."""
    doc = await db["schema_version"].find_one({}, sort=[("_id", -1)])
    return int(doc["_id"]) if doc else 0


async def migrate(db: MongoDb) -> list[int]:
    """Apply pending migrations; indexes are (re)ensured on every start."""
    version = await current_version(db)
    if version > LATEST_VERSION:
        raise StoreError(
            f"the store is at schema version {version}, newer than this R42 understands "
            f"({LATEST_VERSION}); upgrade R42"
        )
    await _indexes(db)
    recorded = {
        int(d["_id"]) for d in await db["schema_version"].find({}, {"_id": 1}).to_list(None)
    }
    applied = []
    for migration in MIGRATIONS:
        # The same rule as SQLite's: from 13 on, a late-landing number still applies.
        if not must_apply(migration.version, current=version, recorded=recorded):
            continue
        await migration.apply(db)
        try:
            await db["schema_version"].insert_one(
                {
                    "_id": migration.version,
                    "description": migration.description,
                    "applied_at": utcnow(),
                }
            )
        except DuplicateKeyError:
            pass  # another process recorded it first
        applied.append(migration.version)
    return applied
