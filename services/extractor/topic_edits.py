"""Admin topic actions on the KG owner: edit (and lock), delete, merge, add or remove a relation.

Every action is authorised here against the owner's admin rule (never a request field),
written as one graph change after its before-image (so `r42 graph undo ID` restores it),
marks what an admin set as curated (extraction keeps it; a locked relevance counts, an
unlocked one is extraction's again), audits the attempt, refusals included, and announces
kb.updated. One path for Slack, Teams, the console and the CLI (bus or in-process).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError

from services.extractor.outcomes import Publish, publish_kb_updated
from services.extractor.ports import ExtractorStore
from services.extractor.provenance import ADMIN, add_assertions
from services.extractor.tombstones import bury
from services.extractor.undo import record_before_image
from shared.bus.topic_rpc import TopicAction, TopicReply
from shared.errors import BadInputError, NotFoundError
from shared.store import (
    AuditEntry,
    KbChanges,
    Relation,
    RelationKey,
    Topic,
    TopicMetadata,
    describe_validation,
)
from shared.store.models_provenance import check_curated

EDITABLE = ("label", "type", "description", "learning_relevance")
_TEXT_FIELDS = ("label", "type", "description")
IsAdmin = Callable[[str], bool]
_Action = Callable[[ExtractorStore, TopicAction, Publish | None], Awaitable[TopicReply]]


async def answer_topic_action(
    request: TopicAction, *, store: ExtractorStore, publish: Publish | None, is_admin: IsAdmin
) -> TopicReply:
    """Authorise, apply and audit one topic action; the reply says how it went."""
    if not is_admin(request.actor):
        reply = TopicReply(outcome="refused", detail=f"{request.actor} is not an admin")
        await _audit(store, request, reply, allowed=False)
        return reply
    try:
        reply = await _ACTIONS[request.action](store, request, publish)
    except NotFoundError as exc:
        reply = TopicReply(outcome="not_found", detail=str(exc))
    except BadInputError as exc:
        reply = TopicReply(outcome="invalid", detail=str(exc))
    await _audit(store, request, reply, allowed=True)
    return reply


def action_target(request: TopicAction) -> str:
    """What the audit names as the target: the topic, a merge or a relation."""
    if request.into is not None:
        return f"{request.topic_id} -> {request.into}"
    if (rel := request.relation) is not None:
        ends = (request.topic_id, rel.other) if rel.outgoing else (rel.other, request.topic_id)
        return f"{ends[0]} -{rel.type}-> {ends[1]}"
    return request.topic_id


async def _audit(
    store: ExtractorStore, request: TopicAction, reply: TopicReply, *, allowed: bool
) -> None:
    after = reply.after
    if reply.outcome != "done":
        asked = request.model_dump(
            mode="json", exclude={"actor", "surface", "action", "topic_id"}, exclude_none=True
        )
        after = {"outcome": reply.outcome, "detail": reply.detail, "requested": asked}
    await store.audit.record(
        AuditEntry(
            actor=request.actor,
            action=f"topic.{request.action}",
            target=action_target(request),
            allowed=allowed,
            before=reply.before if reply.outcome == "done" else None,
            after=after,
            surface=request.surface,
        )
    )


async def _topic(store: ExtractorStore, topic_id: str) -> Topic:
    topic = await store.topics.get(topic_id)
    if topic is None:
        raise NotFoundError(f"no topic {topic_id!r}")
    return topic


def _valid_topic(data: dict[str, Any]) -> Topic:
    try:
        return Topic.model_validate(data)
    except ValidationError as exc:
        raise BadInputError(describe_validation(exc)) from exc


async def _write(store: ExtractorStore, changes: KbChanges, *, reason: str) -> str:
    """Record the before-image, then apply; returns the undo id."""
    undo_id = await record_before_image(store, changes, reason=reason)
    await store.apply_kb_changes(changes)
    return undo_id


async def _announce(
    store: ExtractorStore,
    publish: Publish | None,
    *,
    changed: list[str],
    removed: list[str],
    reason: str,
    undo_id: str,
) -> None:
    if publish is not None:
        await publish_kb_updated(
            store,
            publish,
            changed_ids=changed,
            removed_ids=removed,
            reason=reason,
            key=("topic-action", undo_id),
        )


async def edit_topic(
    store: ExtractorStore, request: TopicAction, publish: Publish | None
) -> TopicReply:
    """Change fields and the lock; changed label, type and description become curated."""
    edit, topic = request.edit, await _topic(store, request.topic_id)
    assert edit is not None  # the request model requires it for an edit
    wanted = {name: getattr(edit, name) for name in EDITABLE if getattr(edit, name) is not None}
    if edit.lock is not None:
        wanted["relevance_locked"] = edit.lock
    candidate = _valid_topic({**topic.model_dump(), **wanted})  # strips and checks the label
    updates = {
        k: getattr(candidate, k) for k in wanted if getattr(candidate, k) != getattr(topic, k)
    }
    if not updates:
        return TopicReply(outcome="unchanged", topic=topic, detail="nothing to change")
    locked = bool(updates.get("relevance_locked", topic.relevance_locked))
    meta = topic.metadata.model_dump(exclude_none=True)
    if not locked and "learning_relevance" in (meta.get("curated") or []):
        meta["curated"] = [f for f in meta["curated"] if f != "learning_relevance"]
    meta["edited_by"] = request.actor
    new = _valid_topic({**candidate.model_dump(), "metadata": meta})
    undo_id = await _write(
        store, KbChanges(topics_upsert=[new]), reason=f"topic.edit {topic.id} by {request.actor}"
    )
    if topic.relevance_locked and ({"learning_relevance", "relevance_locked"} & set(updates)):
        # An upsert never loosens a lock (extraction must not): an admin's edit sets it here.
        await store.topics.set_relevance(topic.id, new.learning_relevance, lock=locked)
    # The relevance is curated through the lock alone (so an undo that unlocks frees it).
    marked = [f for f in _TEXT_FIELDS if f in updates]
    if marked:
        await store.curation.mark(topic.id, check_curated(marked), by=request.actor)
    if not locked:
        await store.curation.unmark(topic.id, ["learning_relevance"])
    await _announce(
        store,
        publish,
        changed=[topic.id],
        removed=[],
        undo_id=undo_id,
        reason=f"topic {topic.id} edited by {request.actor}",
    )
    return TopicReply(
        outcome="done",
        topic=await store.topics.get(topic.id),
        undo_batch=undo_id,
        before={k: getattr(topic, k) for k in updates},
        after=updates,
    )


async def delete_topic(
    store: ExtractorStore, request: TopicAction, publish: Publish | None
) -> TopicReply:
    """Delete a topic with its relations (its content and quiz bank follow kb.updated)."""
    topic = await _topic(store, request.topic_id)
    relations = await store.relations.list(topic_id=topic.id)
    undo_id = await _write(
        store,
        KbChanges(topics_delete=[topic.id]),
        reason=f"topic.delete {topic.id} by {request.actor}",
    )
    # A source that still asserts it must not bring it back (undo of this change lifts it).
    await bury(store, topic, by=request.actor, undo_id=undo_id)
    await store.curation.unmark(topic.id)
    neighbours = sorted({end for r in relations for end in (r.source, r.target)} - {topic.id})
    await _announce(
        store,
        publish,
        changed=neighbours,
        removed=[topic.id],
        undo_id=undo_id,
        reason=f"topic {topic.id} deleted by {request.actor}",
    )
    before = {
        "topic": topic.model_dump(mode="json", exclude={"created_at", "updated_at"}),
        "relations": [_key_text(r) for r in relations],
    }
    return TopicReply(
        outcome="done",
        undo_batch=undo_id,
        before=before,
        after={"deleted": True},
        removed_relations=len(relations),
    )


async def merge_topic(
    store: ExtractorStore, request: TopicAction, publish: Publish | None
) -> TopicReply:
    """Merge a topic into another: its relations move there (no duplicates, no self-loops)."""
    topic = await _topic(store, request.topic_id)
    into = await _topic(store, str(request.into))
    relations = await store.relations.list(topic_id=topic.id)
    existing = {r.key.as_tuple() for r in await store.relations.list(topic_id=into.id)}
    moved: dict[tuple[str, str, str], Relation] = {}
    for r in relations:
        source = into.id if r.source == topic.id else r.source
        target = into.id if r.target == topic.id else r.target
        key = (source, target, r.type)
        if source != target and key not in existing:
            moved[key] = r.model_copy(update={"source": source, "target": target})
    meta = into.metadata.model_dump(exclude_none=True)
    meta["merged"] = sorted({*(meta.get("merged") or []), topic.id})
    kept = into.model_copy(update={"metadata": TopicMetadata.model_validate(meta)})
    changes = KbChanges(
        topics_delete=[topic.id], topics_upsert=[kept], relations_upsert=list(moved.values())
    )
    why = f"topic {topic.id} merged into {into.id} by {request.actor}"
    undo_id = await _write(store, changes, reason=why)
    # A source that still names the merged-away topic must not bring the duplicate back.
    await bury(store, topic, by=request.actor, undo_id=undo_id)
    await add_assertions(store, ADMIN, topics=[], relations=list(moved))
    await store.curation.unmark(topic.id)
    changed = sorted({into.id, *(end for k in moved for end in k[:2])})
    await _announce(
        store, publish, changed=changed, removed=[topic.id], undo_id=undo_id, reason=why
    )
    before = {"topic": topic.id, "relations": [_key_text(r) for r in relations]}
    after = {
        "merged_into": into.id,
        "relations_moved": len(moved),
        "relations_dropped": len(relations) - len(moved),
    }
    return TopicReply(
        outcome="done",
        topic=await store.topics.get(into.id),
        undo_batch=undo_id,
        before=before,
        after=after,
        removed_relations=len(relations) - len(moved),
    )


def _relation_of(request: TopicAction) -> Relation:
    rel = request.relation
    assert rel is not None  # the request model requires it for relation actions
    ends = (request.topic_id, rel.other) if rel.outgoing else (rel.other, request.topic_id)
    return Relation(source=ends[0], target=ends[1], type=rel.type, description=rel.description)


def _key_text(r: RelationKey) -> str:
    return f"{r.source} -{r.type}-> {r.target}"


async def add_relation(
    store: ExtractorStore, request: TopicAction, publish: Publish | None
) -> TopicReply:
    """Add a relation between two existing topics, asserted by the admins."""
    relation = _relation_of(request)
    for end in (relation.source, relation.target):
        await _topic(store, end)
    known = {r.key.as_tuple() for r in await store.relations.list(topic_id=relation.source)}
    if relation.key.as_tuple() in known:
        return TopicReply(outcome="unchanged", detail=f"{_key_text(relation)} exists already")
    why = f"relation {_key_text(relation)} added by {request.actor}"
    undo_id = await _write(store, KbChanges(relations_upsert=[relation]), reason=why)
    await add_assertions(store, ADMIN, topics=[], relations=[relation.key.as_tuple()])
    await _announce(
        store,
        publish,
        changed=[relation.source, relation.target],
        removed=[],
        undo_id=undo_id,
        reason=why,
    )
    return TopicReply(
        outcome="done", undo_batch=undo_id, before=None, after={"relation": _key_text(relation)}
    )


async def remove_relation(
    store: ExtractorStore, request: TopicAction, publish: Publish | None
) -> TopicReply:
    """Remove one relation of the topic."""
    relation = _relation_of(request)
    known = {r.key.as_tuple() for r in await store.relations.list(topic_id=relation.source)}
    if relation.key.as_tuple() not in known:
        raise NotFoundError(f"no relation {_key_text(relation)}")
    why = f"relation {_key_text(relation)} removed by {request.actor}"
    undo_id = await _write(store, KbChanges(relations_delete=[relation.key]), reason=why)
    await _announce(
        store,
        publish,
        changed=[relation.source, relation.target],
        removed=[],
        undo_id=undo_id,
        reason=why,
    )
    return TopicReply(
        outcome="done",
        undo_batch=undo_id,
        before={"relation": _key_text(relation)},
        after=None,
        removed_relations=1,
    )


_ACTIONS: dict[str, _Action] = {
    "edit": edit_topic,
    "delete": delete_topic,
    "merge": merge_topic,
    "relation_add": add_relation,
    "relation_remove": remove_relation,
}
