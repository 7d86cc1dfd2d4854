"""Documents of the service-state collections (used by the repositories and migration 6)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from shared.store._common import iso_week, normalise_time, utcnow
from shared.store.models_state import (
    ChatProposal,
    CustomTopic,
    FeedbackVote,
    Flag,
    IdempotencyRecord,
    Lease,
    MergeProgress,
    UploadMessage,
)


def _fields(doc: Mapping[str, Any], *drop: str) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k not in ("_id", *drop)}


def vote_id(turn_id: str, user: str) -> dict[str, str]:
    """The _id of a user's vote on a turn (a sub-document: both parts may hold any character)."""
    return {"turn": turn_id, "user": user}


def idempotency_id(scope: str, key: str) -> dict[str, str]:
    """The _id of an idempotency key."""
    return {"scope": scope, "key": key}


def proposal_doc(proposal: ChatProposal) -> dict[str, Any]:
    """A proposal's document (_id is its id)."""
    doc = proposal.model_dump(exclude={"id"})
    doc["created_at"] = proposal.created_at or utcnow()
    return {"_id": proposal.id, **doc}


def proposal_from_doc(doc: Mapping[str, Any]) -> ChatProposal:
    """A proposal from its document."""
    return ChatProposal.model_validate({"id": doc["_id"], **_fields(doc)})


def vote_doc(vote: FeedbackVote) -> dict[str, Any]:
    """A vote's document, with the ISO week of its first casting for the weekly rates."""
    created = normalise_time(vote.created_at or utcnow())
    doc = vote.model_dump()
    doc.update(created_at=created, updated_at=vote.updated_at or created, week=iso_week(created))
    return {"_id": vote_id(vote.turn_id, vote.user), **doc}


def vote_from_doc(doc: Mapping[str, Any]) -> FeedbackVote:
    """A vote from its document."""
    return FeedbackVote.model_validate(_fields(doc, "week"))


def upload_doc(message: UploadMessage) -> dict[str, Any]:
    """An upload message's document (_id is the source id)."""
    now = utcnow()
    doc = message.model_dump(exclude={"source_id"})
    doc.update(created_at=message.created_at or now, updated_at=now)
    return {"_id": message.source_id, **doc}


def upload_from_doc(doc: Mapping[str, Any]) -> UploadMessage:
    """An upload message from its document."""
    return UploadMessage.model_validate({"source_id": doc["_id"], **_fields(doc)})


def progress_doc(progress: MergeProgress) -> dict[str, Any]:
    """Merge counts as a document (_id is the source id)."""
    return {"_id": progress.source_id, **progress.model_dump(exclude={"source_id"})}


def progress_from_doc(doc: Mapping[str, Any]) -> MergeProgress:
    """Merge counts from their document."""
    return MergeProgress.model_validate({"source_id": doc["_id"], **_fields(doc)})


def idempotency_doc(record: IdempotencyRecord) -> dict[str, Any]:
    """An idempotency record's document; expires_at also drives a TTL index."""
    return {"_id": idempotency_id(record.scope, record.key), **record.model_dump()}


def idempotency_from_doc(doc: Mapping[str, Any]) -> IdempotencyRecord:
    """An idempotency record from its document."""
    return IdempotencyRecord.model_validate(_fields(doc))


def custom_topic_doc(topic: CustomTopic) -> dict[str, Any]:
    """A custom topic's document (_id is its id)."""
    doc = topic.model_dump(exclude={"id"})
    doc["created_at"] = topic.created_at or utcnow()
    return {"_id": topic.id, **doc}


def custom_topic_from_doc(doc: Mapping[str, Any]) -> CustomTopic:
    """A custom topic from its document."""
    return CustomTopic.model_validate({"id": doc["_id"], **_fields(doc)})


def flag_doc(flag: Flag) -> dict[str, Any]:
    """A flag's document (_id is its name)."""
    return {"_id": flag.name, "value": flag.value, "updated_at": flag.updated_at or utcnow()}


def flag_from_doc(doc: Mapping[str, Any]) -> Flag:
    """A flag from its document."""
    return Flag(name=doc["_id"], value=doc.get("value") or {}, updated_at=doc.get("updated_at"))


def lease_doc(lease: Lease) -> dict[str, Any]:
    """A lease's document (_id is the lock name)."""
    return {"_id": lease.name, **lease.model_dump(exclude={"name"})}


def lease_from_doc(doc: Mapping[str, Any]) -> Lease:
    """A lease from its document."""
    return Lease.model_validate({"name": doc["_id"], **_fields(doc)})
