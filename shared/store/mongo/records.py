"""MongoDB held extractions, handbook tree cache, kb version, current sources, conversation refs."""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping
from typing import Any

from pymongo import ReturnDocument

from shared.errors import BadInputError, StoreUnavailableError
from shared.store._common import need, utcnow
from shared.store.models_records import ConversationRef, HandbookTree, HeldChange
from shared.store.mongo.client import DuplicateKeyError, MongoDb, mongo_errors

_CAS_ATTEMPTS = 50
KB_VERSION_ID = "kb"


def held_doc(held: HeldChange) -> dict[str, Any]:
    """A held change's document (_id is its key)."""
    doc = held.model_dump(mode="json", exclude={"key", "created_at"})
    return {"_id": held.key, **doc, "created_at": held.created_at or utcnow()}


def _held(doc: Mapping[str, Any]) -> HeldChange:
    return HeldChange.model_validate({"key": doc["_id"], **{k: v for k, v in doc.items()
                                                           if k != "_id"}})  # fmt: skip


@mongo_errors
class MongoHeldChanges:
    """HeldChangeRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def put(self, held: HeldChange) -> HeldChange:
        """Hold a change (a held key again replaces it)."""
        stored = held.model_copy(update={"created_at": held.created_at or utcnow()})
        doc = held_doc(stored)
        await self._db["held_changes"].replace_one({"_id": doc["_id"]}, doc, upsert=True)
        return stored

    async def get(self, key: str) -> HeldChange | None:
        """One held change or None."""
        doc = await self._db["held_changes"].find_one({"_id": key})
        return _held(doc) if doc else None

    async def list(self) -> builtins.list[HeldChange]:
        """Every held change, by key."""
        return [_held(d) async for d in self._db["held_changes"].find({}).sort("_id", 1)]

    async def take(self, key: str) -> HeldChange | None:
        """Remove and return a held change (once)."""
        doc = await self._db["held_changes"].find_one_and_delete({"_id": key})
        return _held(doc) if doc else None


def tree_id(where: str, path: str) -> str:
    """The _id of a folder's cached listing."""
    return f"{where}|{path}"


@mongo_errors
class MongoHandbookTrees:
    """HandbookTreeRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def get(self, where: str, path: str) -> HandbookTree | None:
        """The cached listing of one repository folder, or None."""
        doc = await self._db["handbook_trees"].find_one({"_id": tree_id(where, path)})
        if doc is None:
            return None
        return HandbookTree.model_validate({k: v for k, v in doc.items() if k != "_id"})

    async def put(self, tree: HandbookTree) -> None:
        """Cache (or replace) a folder's listing."""
        doc = {**tree.model_dump(mode="json"), "updated_at": utcnow()}
        await self._db["handbook_trees"].replace_one(
            {"_id": tree_id(tree.where, tree.path)}, doc, upsert=True
        )

    async def clear(self) -> int:
        """Forget every cached listing."""
        return (await self._db["handbook_trees"].delete_many({})).deleted_count


@mongo_errors
class MongoKbVersion:
    """KbVersionRepository on MongoDB; advance is compare-and-set on the stored hash."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def get(self) -> str | None:
        """The current hash, or None before the first change."""
        doc = await self._db["kb_version"].find_one({"_id": KB_VERSION_ID})
        return str(doc["hash"]) if doc else None

    async def advance(self, step: Callable[[str], str], *, initial: str | None = None) -> str:
        """Atomically store step(current or initial) and return it."""
        versions = self._db["kb_version"]
        for _ in range(_CAS_ATTEMPTS):
            doc = await versions.find_one({"_id": KB_VERSION_ID})
            current = str(doc["hash"]) if doc else initial
            if current is None:
                raise BadInputError("the kb version has no hash yet: give the initial one")
            new = need(step(current), "a kb version hash must not be empty")
            if doc is None:
                try:
                    await versions.insert_one(
                        {"_id": KB_VERSION_ID, "hash": new, "updated_at": utcnow()}
                    )
                    return new
                except DuplicateKeyError:
                    continue
            result = await versions.update_one(
                {"_id": KB_VERSION_ID, "hash": doc["hash"]},
                {"$set": {"hash": new, "updated_at": utcnow()}},
            )
            if result.matched_count:
                return new
        raise StoreUnavailableError("the kb version is contended; try again")


@mongo_errors
class MongoCurrentSources:
    """CurrentSourceRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def get(self, name: str) -> str | None:
        """The current source id of a document, or None."""
        doc = await self._db["current_sources"].find_one({"_id": name})
        return str(doc["source_id"]) if doc else None

    async def swap(self, name: str, source_id: str) -> str | None:
        """Make source_id current for name; returns the previous source id."""
        need(name, "a document needs a name")
        need(source_id, "a current source needs an id")
        doc = await self._db["current_sources"].find_one_and_update(
            {"_id": name},
            {"$set": {"source_id": source_id, "updated_at": utcnow()}},
            upsert=True,
            return_document=ReturnDocument.BEFORE,
        )
        return str(doc["source_id"]) if doc else None

    async def clear(self, name: str, source_id: str) -> bool:
        """Forget the name only while source_id is its current source."""
        result = await self._db["current_sources"].delete_one({"_id": name, "source_id": source_id})
        return result.deleted_count > 0


def ref_doc(ref: ConversationRef) -> dict[str, Any]:
    """A conversation reference's document (_id: surface and conversation id)."""
    doc = ref.model_dump(mode="json", exclude={"updated_at"})
    return {"_id": f"{ref.surface}|{ref.conversation_id}", **doc,
            "updated_at": ref.updated_at or utcnow()}  # fmt: skip


def _ref(doc: Mapping[str, Any]) -> ConversationRef:
    return ConversationRef.model_validate({k: v for k, v in doc.items() if k != "_id"})


@mongo_errors
class MongoConversationRefs:
    """ConversationRefRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def put(self, ref: ConversationRef) -> None:
        """Remember (or replace) the reference of a conversation."""
        doc = ref_doc(ref.model_copy(update={"updated_at": utcnow()}))
        await self._db["conversation_refs"].replace_one({"_id": doc["_id"]}, doc, upsert=True)

    async def get(self, surface: str, conversation_id: str) -> ConversationRef | None:
        """The stored reference of a conversation."""
        doc = await self._db["conversation_refs"].find_one({"_id": f"{surface}|{conversation_id}"})
        return _ref(doc) if doc else None

    async def personal(self, surface: str, user_id: str) -> ConversationRef | None:
        """The user's newest personal chat with the bot."""
        doc = await self._db["conversation_refs"].find_one(
            {"surface": surface, "user_id": user_id}, sort=[("updated_at", -1)]
        )
        return _ref(doc) if doc else None

    async def list(self, surface: str) -> builtins.list[ConversationRef]:
        """Every reference of a surface, by conversation id."""
        cursor = self._db["conversation_refs"].find({"surface": surface}).sort("conversation_id", 1)
        return [_ref(d) async for d in cursor]
