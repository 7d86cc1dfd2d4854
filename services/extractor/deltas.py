"""Approved suggestions: re-validate the delta against the current graph and apply it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Literal

from pydantic import ValidationError

from services.extractor.curation import CURATABLE, CURATED_FIELD
from services.extractor.outcomes import Publish, publish_kb_updated
from services.extractor.ports import ExtractorStore
from services.extractor.provenance import ADMIN, add_assertions
from services.extractor.tombstones import lift
from shared.bus import KbDeltaDecided
from shared.errors import BadInputError
from shared.kb import GraphDelta, validate_delta
from shared.store import KbChanges, Relation, Suggestion, Topic, TopicMetadata

log = logging.getLogger(__name__)

DecisionOutcome = Literal["applied", "nothing_to_apply", "rejected", "already_decided"]


def delta_changes(delta: GraphDelta, *, suggestion_id: str, decided_by: str) -> KbChanges:
    """The validated delta as store changes (adds only; validate_delta dropped the rest)."""
    # An admin approved these topics: they are the admin's, never removed by a retraction.
    meta = {"source": "suggestion", "suggestion_id": suggestion_id, "approved_by": decided_by,
            "created_by_admin": True}  # fmt: skip
    return KbChanges(
        topics_upsert=[
            Topic(id=t.id, label=t.label, type=t.type, description=t.description,
                  learning_relevance=t.learning_relevance,
                  metadata=TopicMetadata.model_validate(meta))
            for t in delta.topics
        ],
        relations_upsert=[
            Relation(source=r.source, target=r.target, type=r.type,
                     description=r.description or None)
            for r in delta.relations
        ],
    )  # fmt: skip


async def apply_decision(
    *,
    store: ExtractorStore,
    event: KbDeltaDecided,
    publish: Publish,
    is_admin: Callable[[str], bool],
) -> DecisionOutcome:
    """Apply or reject a suggestion exactly once (see decide_suggestion); the outcome only."""
    outcome, _, _ = await decide_suggestion(
        store=store, event=event, publish=publish, is_admin=is_admin
    )
    return outcome


async def decide_suggestion(
    *,
    store: ExtractorStore,
    event: KbDeltaDecided,
    publish: Publish,
    is_admin: Callable[[str], bool],
) -> tuple[DecisionOutcome, int, int]:
    """Apply or reject a suggestion exactly once; a redelivered decision changes nothing.

    Only a stored suggestion can be decided, and only by someone the owner's own rule
    `is_admin` accepts (services/extractor/admins.py); the delta applied is the stored one,
    never the event's. Anything else raises BadInputError (termed, reported as `failed.*`).

    Order: apply, publish kb.updated, then mark decided (compare-and-set from pending). A
    crash in between redelivers the event: re-validation drops what was already added,
    the kb.updated id is derived (deduplicated) and the mark is set then.
    """
    if not is_admin(event.decided_by):
        raise BadInputError(
            f"suggestion {event.suggestion_id}: {event.decided_by!r} is not an admin"
        )
    suggestion = await store.suggestions.get(event.suggestion_id)
    if suggestion is None:
        raise BadInputError(f"no stored suggestion {event.suggestion_id} to decide")
    if suggestion.status != "pending":
        return "already_decided", 0, 0
    if event.decision == "rejected":
        decided = await store.suggestions.decide(
            event.suggestion_id, approve=False, by=event.decided_by
        )
        return ("rejected" if decided is not None else "already_decided"), 0, 0
    if suggestion.context.get("kind") == CURATED_FIELD:
        applied = await _apply_field(store, suggestion, event, publish)
        return applied, int(applied == "applied"), 0
    delta = validate_delta(suggestion.delta, await store.topics.list())
    if delta is not None:
        # A redelivery (or an overlapping proposal) must not count existing relations.
        known = {(r.source, r.target, r.type) for r in await store.relations.list()}
        fresh = tuple(r for r in delta.relations if (r.source, r.target, r.type) not in known)
        delta = delta.model_copy(update={"relations": fresh})
        if not delta.topics and not delta.relations:
            delta = None
    outcome: DecisionOutcome = "nothing_to_apply"
    counts = (0, 0)
    if delta is not None:
        changes = delta_changes(delta, suggestion_id=suggestion.id, decided_by=event.decided_by)
        await store.apply_kb_changes(changes)
        await lift(store, (t.id for t in delta.topics))  # an admin re-created them on purpose
        keys = [(r.source, r.target, r.type) for r in delta.relations]
        await add_assertions(store, ADMIN, topics=[t.id for t in delta.topics], relations=keys)
        changed = [t.id for t in delta.topics]
        changed += [end for r in delta.relations for end in (r.source, r.target)]
        await publish_kb_updated(
            store, publish, changed_ids=changed,
            reason=f"suggestion {suggestion.id} approved by {event.decided_by}",
            key=("suggestion", suggestion.id), correlation_id=event.correlation_id,
        )  # fmt: skip
        outcome, counts = "applied", (len(delta.topics), len(delta.relations))
    decided = await store.suggestions.decide(event.suggestion_id, approve=True, by=event.decided_by)
    if decided is None:
        log.warning("suggestion %s was decided concurrently", event.suggestion_id)
    return outcome, *counts


async def _apply_field(
    store: ExtractorStore, suggestion: Suggestion, event: KbDeltaDecided, publish: Publish
) -> DecisionOutcome:
    """An approved extracted value of a curated field replaces the admin's (still curated)."""
    context = suggestion.context
    topic_id, field, value = context.get("topic_id"), context.get("field"), context.get("extracted")
    topic = await store.topics.get(str(topic_id)) if isinstance(topic_id, str) else None
    outcome: DecisionOutcome = "nothing_to_apply"
    if topic is not None and field in CURATABLE and isinstance(value, str):
        try:
            updated = Topic.model_validate({**topic.model_dump(), str(field): value})
        except ValidationError as exc:
            raise BadInputError(
                f"suggestion {suggestion.id}: {field} {value!r} is invalid"
            ) from exc
        if updated != topic:
            await store.apply_kb_changes(KbChanges(topics_upsert=[updated]))
            # The approving admin set it now: extraction keeps this value from here on.
            await store.curation.mark(topic.id, [field], by=event.decided_by)
            await publish_kb_updated(
                store, publish, changed_ids=[topic.id],
                reason=f"suggestion {suggestion.id} approved by {event.decided_by}",
                key=("suggestion", suggestion.id), correlation_id=event.correlation_id,
            )  # fmt: skip
            outcome = "applied"
    decided = await store.suggestions.decide(suggestion.id, approve=True, by=event.decided_by)
    if decided is None:
        log.warning("suggestion %s was decided concurrently", suggestion.id)
    return outcome
