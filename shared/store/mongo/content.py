"""MongoDB content per topic and quiz banks."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping
from typing import Any

from pymongo import ReturnDocument

from shared.errors import BadInputError
from shared.store._common import build, utcnow
from shared.store.fence import Fence
from shared.store.models_learning import CONTENT_KINDS, Content, ContentKind, QuizBank, QuizQuestion
from shared.store.mongo.client import DuplicateKeyError, MongoDb, mongo_errors


def _content(doc: Mapping[str, Any]) -> Content:
    data = {k: v for k, v in doc.items() if k != "_id"}
    return Content.model_validate({"topic_id": doc["_id"], **data})


@mongo_errors
class MongoContent:
    """ContentRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def get(self, topic_id: str) -> Content | None:
        """A topic's content or None."""
        doc = await self._db["content"].find_one({"_id": topic_id})
        return _content(doc) if doc else None

    async def get_many(self, topic_ids: Iterable[str]) -> builtins.list[Content]:
        """The content of these topics that exists, in topic id order (one query)."""
        cursor = self._db["content"].find({"_id": {"$in": sorted(set(topic_ids))}}).sort("_id", 1)
        return [_content(doc) async for doc in cursor]

    async def list(self) -> list[Content]:
        """Every topic's content, ordered by topic id (one read for indexing)."""
        docs = await self._db["content"].find({}).sort("_id", 1).to_list(None)
        return [_content(doc) for doc in docs]

    async def put(self, content: Content) -> None:
        """Replace a topic's content."""
        doc = content.model_dump(exclude={"topic_id"})
        doc["generated_at"] = content.generated_at or utcnow()
        await self._db["content"].replace_one({"_id": content.topic_id}, doc, upsert=True)

    async def set_part(
        self,
        topic_id: str,
        kind: ContentKind,
        value: dict[str, Any],
        *,
        prompt_version: str | None,
        topic_fingerprint: str | None,
        fence: Fence | None = None,
    ) -> Content:
        """Atomically set one part (clears stale, stamps generated_at); fenced: see the protocol.

        The fence is read right before the write; without a
        replica-set transaction a holder that stalls between that read and the write for
        longer than the lease's TTL is not covered.
        """
        if kind not in CONTENT_KINDS:
            raise BadInputError(f"unknown content kind {kind!r}; expected one of {CONTENT_KINDS}")
        build(Content, topic_id=topic_id, prompt_version=prompt_version, **{kind: value})
        if fence is not None and not await self._db["locks"].find_one(
            {"_id": fence.name, "owner": fence.owner}
        ):
            raise fence.lost()
        update = {
            kind: value,
            "prompt_version": prompt_version,
            "stale": False,
            "generated_at": utcnow(),
            "topic_fingerprint": topic_fingerprint,
        }
        doc = await self._db["content"].find_one_and_update(
            {"_id": topic_id}, {"$set": update}, upsert=True, return_document=ReturnDocument.AFTER
        )
        assert doc is not None  # an upsert returning AFTER always has the document
        return _content(doc)

    async def mark_stale(self, topic_ids: Iterable[str]) -> int:
        """Flag content of changed topics as stale; returns rows changed."""
        result = await self._db["content"].update_many(
            {"_id": {"$in": sorted(set(topic_ids))}, "stale": {"$ne": True}},
            {"$set": {"stale": True}},
        )
        return result.modified_count

    async def list_stale(self) -> builtins.list[str]:
        """Topic ids whose content is stale."""
        cursor = self._db["content"].find({"stale": True}, {"_id": 1}).sort("_id", 1)
        return [d["_id"] async for d in cursor]

    async def delete(self, topic_id: str) -> bool:
        """Delete a topic's content."""
        return (await self._db["content"].delete_one({"_id": topic_id})).deleted_count > 0


@mongo_errors
class MongoQuizBanks:
    """QuizBankRepository on MongoDB: one document per topic, questions pushed atomically."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def get(self, topic_id: str) -> QuizBank | None:
        """A topic's bank or None."""
        doc = await self._db["quiz_banks"].find_one({"_id": topic_id})
        if doc is None:
            return None
        return QuizBank.model_validate(
            {
                "topic_id": doc["_id"],
                "questions": doc.get("questions", []),
                "updated_at": doc.get("updated_at"),
            }
        )

    async def add_questions(
        self, topic_id: str, questions: Iterable[QuizQuestion]
    ) -> list[QuizQuestion]:
        """Append questions whose key is new to the bank; returns those added."""
        banks = self._db["quiz_banks"]
        try:
            await banks.update_one(
                {"_id": topic_id},
                {"$setOnInsert": {"questions": [], "updated_at": utcnow()}},
                upsert=True,
            )
        except DuplicateKeyError:
            pass  # created concurrently
        added: list[QuizQuestion] = []
        for question in questions:
            # The key guard in the filter makes each push a compare-and-set.
            result = await banks.update_one(
                {"_id": topic_id, "questions.key": {"$ne": question.key}},
                {
                    "$push": {"questions": question.model_dump(mode="json")},
                    "$set": {"updated_at": utcnow()},
                },
            )
            if result.modified_count:
                added.append(question)
        return added

    async def remove_question(self, topic_id: str, key: str) -> bool:
        """Remove one question by key."""
        result = await self._db["quiz_banks"].update_one(
            {"_id": topic_id, "questions.key": key},
            {"$pull": {"questions": {"key": key}}, "$set": {"updated_at": utcnow()}},
        )
        return result.modified_count > 0

    async def delete(self, topic_id: str) -> bool:
        """Delete a topic's bank."""
        return (await self._db["quiz_banks"].delete_one({"_id": topic_id})).deleted_count > 0
