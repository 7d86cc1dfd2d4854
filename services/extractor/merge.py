"""The merge step: apply one chunk's extraction to the graph, exactly once per chunk."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from services.extractor.curation import curation_marks, keep_curated, suggest_differences
from services.extractor.outcomes import (
    RUNNING,
    Publish,
    add_progress,
    finish_if_done,
    progress_event,
    publish_kb_updated,
)
from services.extractor.pending import pending_of_plan, resolve_pending, settle_pending
from services.extractor.ports import ExtractorStore
from services.extractor.provenance import Assertions, add_assertions, asserted_by_result
from services.extractor.review import hold_if_over_bound
from services.extractor.tombstones import count_skips, without_tombstoned
from shared.bus import ChunkExtracted
from shared.errors import BadInputError, TransientError
from shared.kb import MergePlan, plan_merge, to_kebab_id
from shared.store import ChunkMark, KbChanges, Relation, Source, Topic, TopicMetadata

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
    relations_pending: int = 0
    topics_tombstoned: int = 0
    completed: bool = False
    held: bool = False

    def then(self, later: MergeOutcome) -> MergeOutcome:
        """This outcome followed by the merge of a held successor."""
        return MergeOutcome(
            applied=self.applied or later.applied,
            topics_added=self.topics_added + later.topics_added,
            topics_updated=self.topics_updated + later.topics_updated,
            relations_added=self.relations_added + later.relations_added,
            relations_dropped=self.relations_dropped + later.relations_dropped,
            relations_pending=self.relations_pending + later.relations_pending,
            topics_tombstoned=self.topics_tombstoned + later.topics_tombstoned,
            completed=self.completed or later.completed,
        )


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


async def _check_fits(store: ExtractorStore, event: ChunkExtracted) -> Source:
    """The chunk's source, when the chunk fits it (BadInputError otherwise)."""
    source = await store.sources.get(event.source_id)
    if source is None:
        raise BadInputError(f"chunk {event.chunk_index} names unknown source {event.source_id}")
    total = source.chunks_total
    if total is None or event.chunk_count != total or not 0 <= event.chunk_index < total:
        raise BadInputError(
            f"chunk {event.chunk_index}/{event.chunk_count} does not fit source {source.id} "
            f"({'not chunked yet' if total is None else f'{total} chunk(s)'})"
        )
    return source


async def merge_chunk(
    *, store: ExtractorStore, event: ChunkExtracted, publish: Publish
) -> MergeOutcome:
    """Merge one chunk result in chunk order, whatever order the results arrive in.

    The owner checks meaning as well as shape: a chunk result is accepted only for a source
    in progress, at an index inside the chunk count its own LLM step recorded (anything
    else raises BadInputError: the consumer terms it and reports `failed.chunk.extracted`).
    A result whose predecessors are not all merged yet (a redelivery overtook them) is
    held in the store; the merge of its predecessor applies it. So every delivery order,
    crash and redelivery gives the graph of an uninterrupted in-order run.
    """
    source = await _check_fits(store, event)
    if source.status not in RUNNING:
        if event.chunk_index in await store.sources.merged_chunks(source.id):
            # A redelivery of a chunk merged before the source ended: at most re-announce
            # the completion (a crash may have come between recording and publishing it).
            completed = await finish_if_done(store, source.id, publish, republish=True)
            return MergeOutcome(applied=False, completed=completed)
        await store.pending_merges.clear(source.id)
        raise BadInputError(
            f"chunk {event.chunk_index} of source {source.id}: the source is {source.status}"
        )
    if not await _predecessors_merged(store, source.id, event.chunk_index):
        payload = event.model_dump(mode="json")
        await store.pending_merges.hold(source.id, event.chunk_index, payload)
        # Checked again after holding: a predecessor merging meanwhile may have missed it.
        if not await _predecessors_merged(store, source.id, event.chunk_index):
            log.info("chunk %d of %s held until chunk %d is merged", event.chunk_index,
                     source.id, await store.sources.first_unmerged_chunk(source.id))  # fmt: skip
            return MergeOutcome(applied=False, held=True)
    outcome = await _apply_chunk(store, source, event, publish)
    await store.pending_merges.release(source.id, event.chunk_index)
    index = event.chunk_index + 1
    while not outcome.completed and index < (source.chunks_total or 0):
        held = await store.pending_merges.held(source.id, index)
        if held is None:
            break
        after = await store.sources.get(source.id)
        if after is None or after.status not in RUNNING:
            break
        nxt = ChunkExtracted.model_validate(held.payload)
        outcome = outcome.then(await _apply_chunk(store, after, nxt, publish))
        await store.pending_merges.release(source.id, index)
        index += 1
    return outcome


async def _predecessors_merged(store: ExtractorStore, source_id: str, index: int) -> bool:
    return await store.sources.first_unmerged_chunk(source_id) >= index


async def _apply_chunk(
    store: ExtractorStore, source: Source, event: ChunkExtracted, publish: Publish
) -> MergeOutcome:
    """Upsert one chunk's topics and relations (never deletes), then report progress."""
    # What an admin deleted stays deleted (its relations go with it); the skip is counted.
    unburied = await without_tombstoned(store, event.topics, event.relations)
    plan, existing = await plan_against_store(store, unburied.topics, unburied.relations)
    metadata = {"source": source.name, "source_id": source.id,
                "prompt_version": event.prompt_version}  # fmt: skip
    # What an admin set is kept; a differing extracted value becomes a suggestion for them.
    marks = await curation_marks(store, existing)
    planned = topics_for_store(plan, existing, metadata=metadata)
    upserts, differing = keep_curated(planned, existing, marks)
    await suggest_differences(store, differing, {t.id: t for t in planned},
                              source_name=source.name, source_id=source.id)  # fmt: skip
    changes = KbChanges(topics_upsert=upserts, relations_upsert=relations_for_store(plan))
    asserted = asserted_by_result(plan, existing, unburied.topics, unburied.relations)
    pending = pending_of_plan(plan, source_id=source.id, chunk_index=event.chunk_index)
    if await hold_if_over_bound(store, key=f"{source.id}:{event.chunk_index}",
                                asserter=source.id, updated_ids=list(plan.updated_ids),
                                changes=changes, asserted=asserted,
                                reason=f"chunk {event.chunk_index} of {source.name} would "
                                       f"rewrite {plan.topics_updated} topics"):  # fmt: skip
        # The chunk counts as merged; what it would change waits for an admin.
        changes, asserted, pending = KbChanges(), Assertions(), []
    # Kept before the write: a crash after it cannot lose them (a repeat is ignored).
    await store.pending_merges.add_relations(pending)
    mark = ChunkMark(source_id=source.id, chunk_index=event.chunk_index)
    try:
        result = await store.apply_kb_changes(changes, chunk=mark)
    except BadInputError as exc:
        # An endpoint vanished between planning and writing (a concurrent delete): nothing
        # was written; planning again on redelivery sees the current graph.
        raise TransientError(f"chunk {event.chunk_index} of {source.id}: {exc}") from exc
    # Recorded on every delivery (idempotent): a crash after the write cannot lose it.
    await add_assertions(store, source.id, topics=asserted.topics, relations=asserted.relations)
    await resolve_pending(store, (t.id for t in changes.topics_upsert))
    if not result.applied:
        log.info("chunk %d of %s was merged before; skipped", event.chunk_index, source.id)
        completed = await _finish(store, source.id, publish, republish=True)
        return MergeOutcome(applied=False, completed=completed)
    await count_skips(store, unburied.skipped, asserter=source.id)
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
    completed = await _finish(store, source.id, publish) if last else False
    return MergeOutcome(
        applied=True,
        topics_added=plan.topics_added,
        topics_updated=plan.topics_updated,
        relations_added=plan.relations_added,
        relations_dropped=plan.relations_dropped,
        relations_pending=len(pending),
        topics_tombstoned=len(unburied.skipped),
        completed=completed,
    )


async def _finish(
    store: ExtractorStore, source_id: str, publish: Publish, *, republish: bool = False
) -> bool:
    """Settle the pending relations of a fully merged source, then complete it."""
    source = await store.sources.get(source_id)
    if source is not None and source.chunks_total is not None:
        if await store.sources.first_unmerged_chunk(source_id) >= source.chunks_total:
            await settle_pending(store, source_id)
    return await finish_if_done(store, source_id, publish, republish=republish)
