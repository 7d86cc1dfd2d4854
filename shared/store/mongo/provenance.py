"""MongoDB assertions (provenance) and curation marks."""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from shared.errors import BadInputError, NotFoundError
from shared.store._common import need, normalise_time, utcnow
from shared.store.models import Assertion, RelationKey, relation_from_subject, relation_subject
from shared.store.models_provenance import (
    CuratedField,
    CurationMark,
    Retraction,
    Unasserted,
    check_curated,
)
from shared.store.mongo.client import MongoDb, Session, mongo_errors
from shared.store.mongo.queries import relation_id


def assertion_doc(assertion: Assertion, now: datetime) -> dict[str, Any]:
    """An assertion's document; the _id is its identity (kind, subject, source, chunk)."""
    kind, subject = assertion.subject
    key = {"kind": kind, "subject": subject, "source_id": assertion.source_id,
           "chunk_index": assertion.chunk_index}  # fmt: skip
    return {"_id": key, **key, "version": assertion.version,
            "asserted_at": normalise_time(assertion.asserted_at or now)}  # fmt: skip


def assertion_from_doc(doc: Mapping[str, Any]) -> Assertion:
    """An assertion from its document."""
    data: dict[str, Any] = {
        "source_id": doc["source_id"], "chunk_index": doc["chunk_index"],
        "version": doc.get("version", ""), "asserted_at": doc.get("asserted_at"),
    }  # fmt: skip
    if doc["kind"] == "topic":
        data["topic_id"] = doc["subject"]
    else:
        data["relation"] = relation_from_subject(doc["subject"])
    return Assertion.model_validate(data)


async def record_assertions(db: MongoDb, assertions: list[Assertion], session: Session) -> None:
    """Upsert assertions (the caller has checked that their subjects exist)."""
    now = utcnow()
    for assertion in assertions:
        doc = assertion_doc(assertion, now)
        key = doc.pop("_id")
        await db["assertions"].update_one({"_id": key}, {"$set": doc}, upsert=True, session=session)


async def missing_subjects(
    db: MongoDb, assertions: list[Assertion], *, topics_after: set[str], relations_after: set[str],
    session: Session,
) -> list[str]:  # fmt: skip
    """Asserted subjects that will not exist; *_after are the ids the change itself provides."""
    topic_ids = {a.topic_id for a in assertions if a.topic_id is not None} - topics_after
    subjects = {a.subject[1] for a in assertions if a.relation is not None} - relations_after
    found = {d["_id"] async for d in db["topics"].find(
        {"_id": {"$in": sorted(topic_ids)}}, {"_id": 1}, session=session)}  # fmt: skip
    rel_found = {d["_id"] async for d in db["relations"].find(
        {"_id": {"$in": sorted(subjects)}}, {"_id": 1}, session=session)}  # fmt: skip
    return sorted(topic_ids - found) + sorted(subjects - rel_found)


async def drop_for_subjects(
    db: MongoDb, *, topic_ids: list[str], relation_subjects: list[str], session: Session
) -> None:
    """Delete the assertions (and topics' curation marks) of subjects being deleted."""
    if topic_ids:
        await db["assertions"].delete_many(
            {"kind": "topic", "subject": {"$in": topic_ids}}, session=session
        )
        await db["topic_curation"].delete_many({"topic_id": {"$in": topic_ids}}, session=session)
    if relation_subjects:
        await db["assertions"].delete_many(
            {"kind": "relation", "subject": {"$in": relation_subjects}}, session=session
        )


async def orphans(
    db: MongoDb, topic_ids: list[str] | None, subjects: list[str] | None
) -> Unasserted:
    """Existing, uncurated topics and existing relations with no assertion (among the given)."""
    topic_query: dict[str, Any] = {} if topic_ids is None else {"_id": {"$in": topic_ids}}
    rel_query: dict[str, Any] = {} if subjects is None else {"_id": {"$in": subjects}}
    candidates = [d["_id"] async for d in db["topics"].find(topic_query, {"_id": 1})]
    asserted = set(await db["assertions"].distinct(
        "subject", {"kind": "topic", "subject": {"$in": candidates}}))  # fmt: skip
    curated = set(
        await db["topic_curation"].distinct("topic_id", {"topic_id": {"$in": candidates}})
    )
    rels = [d["_id"] async for d in db["relations"].find(rel_query, {"_id": 1})]
    rel_asserted = set(await db["assertions"].distinct(
        "subject", {"kind": "relation", "subject": {"$in": rels}}))  # fmt: skip
    return Unasserted(
        topic_ids=sorted(set(candidates) - asserted - curated),
        relations=[relation_from_subject(s) for s in sorted(set(rels) - rel_asserted)],
    )


@mongo_errors
class MongoProvenance:
    """ProvenanceRepository on MongoDB (relation subjects are the relations' _id)."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def record(self, assertions: Iterable[Assertion], *, skip_missing: bool = False) -> int:
        """Record assertions of existing subjects (a repeat refreshes version and time)."""
        batch = list(assertions)
        missing = await missing_subjects(
            self._db, batch, topics_after=set(), relations_after=set(), session=None
        )
        if missing and skip_missing:
            gone = set(missing)
            batch = [a for a in batch if a.subject[1] not in gone]
        elif missing:
            raise BadInputError(
                f"{len(missing)} asserted subject(s) do not exist: {', '.join(missing[:10])}; "
                "nothing was written"
            )
        await record_assertions(self._db, batch, None)
        return len(batch)

    async def of_source(self, source_id: str) -> builtins.list[Assertion]:
        """Everything a source asserts, topics first, by subject then chunk."""
        order = [("kind", -1), ("subject", 1), ("chunk_index", 1)]
        cursor = self._db["assertions"].find({"source_id": source_id}).sort(order)
        return [assertion_from_doc(d) async for d in cursor]

    async def sources_of(self, topic_ids: Iterable[str]) -> dict[str, builtins.list[str]]:
        """topic id -> the sources asserting it."""
        return await self._sources("topic", sorted(set(topic_ids)))

    async def sources_of_relations(
        self, keys: Iterable[RelationKey]
    ) -> dict[tuple[str, str, str], builtins.list[str]]:
        """(source, target, type) -> the sources asserting it."""
        found = await self._sources("relation", sorted({relation_subject(k) for k in keys}))
        return {relation_from_subject(s).as_tuple(): v for s, v in found.items()}

    async def _sources(self, kind: str, subjects: list[str]) -> dict[str, builtins.list[str]]:
        query = {"kind": kind, "subject": {"$in": subjects}}
        result: dict[str, set[str]] = {}
        async for doc in self._db["assertions"].find(query, {"subject": 1, "source_id": 1}):
            result.setdefault(doc["subject"], set()).add(doc["source_id"])
        return {k: sorted(v) for k, v in sorted(result.items())}

    async def retract(
        self,
        source_id: str,
        *,
        except_version: str | None = None,
        chunks: Iterable[int] | None = None,
    ) -> Retraction:
        """Remove a source's assertions and name what no source asserts any more."""
        need(source_id, "retracting needs a source id")
        query: dict[str, Any] = {"source_id": source_id}
        if except_version is not None:
            query["version"] = {"$ne": except_version}
        if chunks is not None:
            query["chunk_index"] = {"$in": sorted(set(chunks))}
        found = [d async for d in self._db["assertions"].find(query, {"kind": 1, "subject": 1})]
        if found:
            # The query again: an assertion re-recorded meanwhile (new version) survives.
            ids = [d["_id"] for d in found]
            await self._db["assertions"].delete_many({"_id": {"$in": ids}, **query})
        topics = sorted({d["subject"] for d in found if d["kind"] == "topic"})
        subjects = sorted({d["subject"] for d in found if d["kind"] == "relation"})
        left = await orphans(self._db, topics, subjects)
        return Retraction(
            removed=len(found),
            topic_ids=topics,
            relations=[relation_from_subject(s) for s in subjects],
            orphan_topic_ids=left.topic_ids,
            orphan_relations=left.relations,
        )

    async def unasserted(
        self,
        *,
        topic_ids: Iterable[str] | None = None,
        relations: Iterable[RelationKey] | None = None,
    ) -> Unasserted:
        """Existing, uncurated topics and existing relations no source asserts."""
        if topic_ids is None and relations is None:
            return await orphans(self._db, None, None)
        subjects = sorted({relation_id(k) for k in relations or ()})
        return await orphans(self._db, sorted(set(topic_ids or ())), subjects)

    async def rename_source(self, old: str, new: str) -> int:
        """Move old's assertions to new; where new asserts the same already, new's row stays."""
        need(new, "renaming needs the new source id")
        if old == new:
            return 0
        moved = 0
        async for doc in self._db["assertions"].find({"source_id": old}):
            key = {**doc["_id"], "source_id": new}
            rest = {k: v for k, v in doc.items() if k != "_id"}
            result = await self._db["assertions"].update_one(
                {"_id": key}, {"$setOnInsert": {**rest, "source_id": new}}, upsert=True
            )
            moved += result.upserted_id is not None
            await self._db["assertions"].delete_one({"_id": doc["_id"]})
        return moved


def _mark(doc: Mapping[str, Any]) -> CurationMark:
    return CurationMark(topic_id=doc["topic_id"], field=doc["field"], by=doc["by"], at=doc["at"])


@mongo_errors
class MongoCuration:
    """CurationRepository on MongoDB."""

    def __init__(self, db: MongoDb) -> None:
        self._db = db

    async def mark(
        self,
        topic_id: str,
        fields: Iterable[CuratedField],
        *,
        by: str,
        now: datetime | None = None,
    ) -> builtins.list[CurationMark]:
        """Mark fields as set by an admin; returns all of the topic's marks."""
        need(by, "a curation mark needs the admin's id")
        chosen = check_curated(fields)
        if await self._db["topics"].find_one({"_id": topic_id}, {"_id": 1}) is None:
            raise NotFoundError(f"topic {topic_id!r} does not exist")
        at = normalise_time(now or utcnow())
        for field in chosen:
            key = {"topic_id": topic_id, "field": field}
            await self._db["topic_curation"].update_one(
                {"_id": key}, {"$set": {**key, "by": by, "at": at}}, upsert=True
            )
        cursor = self._db["topic_curation"].find({"topic_id": topic_id}).sort("field", 1)
        return [_mark(d) async for d in cursor]

    async def unmark(self, topic_id: str, fields: Iterable[str] | None = None) -> int:
        """Remove marks (all of the topic's when fields is None)."""
        query: dict[str, Any] = {"topic_id": topic_id}
        if fields is not None:
            query["field"] = {"$in": sorted(set(fields))}
        return (await self._db["topic_curation"].delete_many(query)).deleted_count

    async def of(self, topic_ids: Iterable[str]) -> dict[str, builtins.list[CurationMark]]:
        """The marks of each given topic that has any."""
        query = {"topic_id": {"$in": sorted(set(topic_ids))}}
        result: dict[str, builtins.list[CurationMark]] = {}
        async for doc in (
            self._db["topic_curation"].find(query).sort([("topic_id", 1), ("field", 1)])
        ):
            result.setdefault(doc["topic_id"], []).append(_mark(doc))
        return result

    async def curated_ids(self, topic_ids: Iterable[str] | None = None) -> set[str]:
        """Topics with at least one mark."""
        query = {} if topic_ids is None else {"topic_id": {"$in": sorted(set(topic_ids))}}
        return set(await self._db["topic_curation"].distinct("topic_id", query))
