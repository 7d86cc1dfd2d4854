"""The merge step: apply one chunk's extraction to the graph, exactly once per chunk."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from services.extractor.curation import curation_marks, keep_curated
from services.extractor.outcomes import (
    RUNNING,
    Publish,
    add_progress,
    finish_if_done,
    progress_event,
    publish_kb_updated,
)
from services.extractor.ports import ExtractorStore
from services.extractor.provenance import Assertions, add_assertions, asserted_by_result
from services.extractor.review import hold_if_over_bound
from shared.bus import ChunkExtracted
from shared.errors import BadInputError, TransientError
from shared.kb import MergePlan, plan_merge, to_kebab_id
from shared.store import ChunkMark, KbChanges, Relation, Topic, TopicMetadata

log = logging.getLogger(__name__)

_MAX_LABEL = 200


@dataclass(frozen=True)
class MergeOutcome:
    """What merging one chunk did (applied is False for an already-merged chunk)."""

    applied: bool
    topics_added: int = 0
    topics_updated: int = 0
    relations_added: int = 0
    relations_dropped: int = 0
    completed: bool = False


def topics_for_store(
    plan: MergePlan, existing: Mapping[str, Topic], *, metadata: Mapping[str, Any]
) -> list[Topic]:
    """The plan's topics as store topics: provenance added, lock and created_at kept."""
    out = []
    for planned in plan.topics:
        before = existing.get(planned.id)
        meta = before.metadata.model_dump(exclude_none=True) if before else {}
        meta.update(metadata)
        out.append(
            Topic(
                id=planned.id,
                label=planned.label[:_MAX_LABEL],
                type=planned.type,  # type: ignore[arg-type]
                description=planned.description,
                learning_relevance=planned.learning_relevance,  # type: ignore[arg-type]
                relevance_locked=before.relevance_locked if before else False,
                metadata=TopicMetadata.model_validate(meta),
                created_at=before.created_at if before else None,
            )
        )
    return out


def relations_for_store(plan: MergePlan) -> list[Relation]:
    """The plan's new relations as store relations."""
    return [
        Relation(source=r.source, target=r.target, type=r.type,  # type: ignore[arg-type]
                 description=r.description or None)
        for r in plan.relations
    ]  # fmt: skip


def _candidate_ids(topics: list[Any], relations: list[Any]) -> set[str]:
    """Every stored topic the merge could touch: the ids named, and each label's kebab id."""
    ids = {t.id for t in topics} | {end for r in relations for end in (r.source, r.target)}
    for item in topics:
        try:
            ids.add(to_kebab_id(item.label))  # "same label, new id" finds the stored topic
        except ValueError:
            continue
    return ids


async def plan_against_store(
    store: ExtractorStore, topics: Iterable[Any], relations: Iterable[Any]
) -> tuple[MergePlan, dict[str, Topic]]:
    """Plan merging extracted topics and relations into the current graph.

    Only the topics the result can touch are read (not the whole graph), so a merge costs
    the same in a large graph; a re-coined id is matched through its label's kebab id.
    """
    topics, relations = list(topics), list(relations)
    existing = {t.id: t for t in await store.topics.get_many(_candidate_ids(topics, relations))}
    # A relation that exists already touches a stored topic: the indexed lookups of those
    # topics (queued together) find it without reading every relation in the graph.
    touching = await asyncio.gather(*(store.relations.list(topic_id=i) for i in sorted(existing)))
    known = {(r.source, r.target, r.type): r for batch in touching for r in batch}
    return plan_merge(existing, known.values(), topics, relations), existing


async def merge_chunk(
    *, store: ExtractorStore, event: ChunkExtracted, publish: Publish
) -> MergeOutcome:
    """Upsert one chunk's topics and relations (never deletes), then report progress.

    The owner checks meaning as well as shape: a chunk result is accepted only for a source
    in progress, at an index inside the chunk count its own LLM step recorded. Anything
    else raises BadInputError (the consumer terms it and reports `failed.chunk.extracted`).
    """
    source = await store.sources.get(event.source_id)
    if source is None:
        raise BadInputError(f"chunk {event.chunk_index} names unknown source {event.source_id}")
    total = source.chunks_total
    if total is None or event.chunk_count != total or not 0 <= event.chunk_index < total:
        raise BadInputError(
            f"chunk {event.chunk_index}/{event.chunk_count} does not fit source {source.id} "
            f"({'not chunked yet' if total is None else f'{total} chunk(s)'})"
        )
    if source.status not in RUNNING:
        if event.chunk_index in await store.sources.merged_chunks(source.id):
            # A redelivery of a chunk merged before the source ended: at most re-announce
            # the completion (a crash may have come between recording and publishing it).
            completed = await finish_if_done(store, source.id, publish, republish=True)
            return MergeOutcome(applied=False, completed=completed)
        raise BadInputError(
            f"chunk {event.chunk_index} of source {source.id}: the source is {source.status}"
        )
    plan, existing = await plan_against_store(store, event.topics, event.relations)
    metadata = {"source": source.name, "source_id": source.id,
                "prompt_version": event.prompt_version}  # fmt: skip
    # What an admin set is kept; the extraction's differing value is only logged.
    marks = await curation_marks(store, existing)
    upserts, _ = keep_curated(topics_for_store(plan, existing, metadata=metadata), existing, marks)
    changes = KbChanges(topics_upsert=upserts, relations_upsert=relations_for_store(plan))
    asserted = asserted_by_result(plan, existing, event.topics, event.relations)
    if await hold_if_over_bound(store, key=f"{source.id}:{event.chunk_index}",
                                asserter=source.id, updated_ids=list(plan.updated_ids),
                                changes=changes, asserted=asserted,
                                reason=f"chunk {event.chunk_index} of {source.name} would "
                                       f"rewrite {plan.topics_updated} topics"):  # fmt: skip
        # The chunk counts as merged; what it would change waits for an admin.
        changes, asserted = KbChanges(), Assertions()
    mark = ChunkMark(source_id=source.id, chunk_index=event.chunk_index)
    try:
        result = await store.apply_kb_changes(changes, chunk=mark)
    except BadInputError as exc:
        # An endpoint vanished between planning and writing (a concurrent delete): nothing
        # was written; planning again on redelivery sees the current graph.
        raise TransientError(f"chunk {event.chunk_index} of {source.id}: {exc}") from exc
    # Recorded on every delivery (idempotent): a crash after the write cannot lose it.
    await add_assertions(store, source.id, topics=asserted.topics, relations=asserted.relations)
    if not result.applied:
        log.info("chunk %d of %s was merged before; skipped", event.chunk_index, source.id)
        completed = await finish_if_done(store, source.id, publish, republish=True)
        return MergeOutcome(applied=False, completed=completed)
    progress = await add_progress(
        store, source.id, changed_ids=plan.changed_ids,
        topics_added=plan.topics_added, topics_updated=plan.topics_updated,
        relations_added=plan.relations_added, relations_dropped=plan.relations_dropped,
    )  # fmt: skip
    if plan.topics_dropped:
        log.info("chunk %d of %s: %d invalid topic(s) dropped", event.chunk_index, source.id,
                 plan.topics_dropped)  # fmt: skip
    after = await store.sources.get(source.id) or source
    last = after.chunks_total is not None and after.chunks_done >= after.chunks_total
    if after.status in RUNNING:
        await publish(progress_event(after, progress, chunk_index=event.chunk_index))
    elif not plan.is_empty:
        # The source already ended (cancelled, failed) but this chunk's result still landed.
        await publish_kb_updated(
            store, publish, changed_ids=plan.changed_ids,
            reason=f"late chunk {event.chunk_index} of source {source.name}",
            key=("chunk", source.id, str(event.chunk_index)),
        )  # fmt: skip
    # apply_kb_changes counted the merge marks: only the last chunk looks any further.
    completed = await finish_if_done(store, source.id, publish) if last else False
    return MergeOutcome(
        applied=True,
        topics_added=plan.topics_added,
        topics_updated=plan.topics_updated,
        relations_added=plan.relations_added,
        relations_dropped=plan.relations_dropped,
        completed=completed,
    )
