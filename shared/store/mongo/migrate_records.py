"""Migration 9 on MongoDB: the last settings documents move into their collections, then the
settings collection is dropped. Writes are $setOnInsert, so a repeat changes nothing."""

from __future__ import annotations

import json

from shared.store._common import utcnow
from shared.store.legacy_records import plan_record_moves
from shared.store.models import relation_subject
from shared.store.mongo.client import MongoDb
from shared.store.mongo.migrate_state import _insert
from shared.store.mongo.provenance import assertion_doc
from shared.store.mongo.records import KB_VERSION_ID, held_doc, ref_doc, tree_id
from shared.store.mongo.state_docs import flag_doc
from shared.store.mongo.undo import batch_doc


async def move_records(db: MongoDb) -> None:
    """Move the remaining settings documents and drop the settings collection."""
    if "settings" not in await db.db.list_collection_names():
        return
    settings = {d["_id"]: json.loads(d["value"]) async for d in db["settings"].find({})}
    now = utcnow()
    moves = plan_record_moves(settings, now=now)
    await _insert(db, "held_changes", map(held_doc, moves.held))
    await _insert(db, "change_log", map(batch_doc, moves.batches))
    topics = set(await db["topics"].distinct("_id"))
    relations = set(await db["relations"].distinct("_id"))
    # Provenance of what is no longer in the graph has nothing left to assert.
    kept = [a for a in moves.assertions
            if (a.topic_id in topics if a.relation is None
                else relation_subject(a.relation) in relations)]  # fmt: skip
    await _insert(db, "assertions", (assertion_doc(a, now) for a in kept))
    await _insert(db, "current_sources", ({"_id": n, "source_id": s, "updated_at": now}
                                          for n, s in moves.current.items()))  # fmt: skip
    await _insert(db, "handbook_trees", ({"_id": tree_id(t.where, t.path),
                                          **t.model_dump(mode="json"), "updated_at": now}
                                         for t in moves.trees))  # fmt: skip
    if moves.kb_hash:
        await _insert(
            db, "kb_version", [{"_id": KB_VERSION_ID, "hash": moves.kb_hash, "updated_at": now}]
        )
    await _insert(db, "conversation_refs", map(ref_doc, moves.refs))
    await _insert(db, "flags", map(flag_doc, moves.flags))
    await db["settings"].drop()
