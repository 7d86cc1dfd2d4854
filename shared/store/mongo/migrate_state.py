"""Migrations 6 and 8 on MongoDB: move the old settings documents into their own collections.

Each document is written with $setOnInsert before its settings document is deleted, so a
crash (or a second process) half-way only repeats writes that change nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from shared.store._common import utcnow
from shared.store.legacy import plan_legacy_moves
from shared.store.mongo.client import MongoDb
from shared.store.mongo.state_docs import (
    custom_topic_doc,
    flag_doc,
    idempotency_doc,
    lease_doc,
    progress_doc,
    proposal_doc,
    upload_doc,
    vote_doc,
)
from shared.store.mongo.turns import turn_doc


async def _insert(db: MongoDb, name: str, docs: Iterable[dict[str, Any]]) -> None:
    for doc in docs:
        key = doc.pop("_id")
        await db[name].update_one({"_id": key}, {"$setOnInsert": doc}, upsert=True)


async def move_settings(db: MongoDb) -> None:
    """Move the recognised settings documents and delete them from settings."""
    settings = {d["_id"]: json.loads(d["value"]) async for d in db["settings"].find({})}
    now = utcnow()
    moves = plan_legacy_moves(settings, now=now)
    await _insert(db, "proposals", map(proposal_doc, moves.proposals))
    await _insert(db, "turns", (turn_doc(t.dated(now)) for t in moves.turns))
    await _insert(db, "feedback", map(vote_doc, moves.votes))
    await _insert(db, "upload_messages", map(upload_doc, moves.uploads))
    await _insert(db, "merge_progress", map(progress_doc, moves.progress))
    await _insert(db, "locks", map(lease_doc, moves.leases))
    await _insert(db, "idempotency_keys", map(idempotency_doc, moves.handled))
    await _insert(db, "custom_topics", map(custom_topic_doc, moves.custom_topics))
    await _insert(db, "flags", map(flag_doc, moves.flags))
    if moves.moved_keys:
        await db["settings"].delete_many({"_id": {"$in": moves.moved_keys}})


async def state_indexes(db: MongoDb) -> None:
    """Nothing to change in documents: the new collections' indexes are ensured at start."""
