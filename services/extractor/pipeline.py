"""The LLM step: split a source into chunks and extract each through emit_knowledge_graph."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from services.extractor.attempts import chunk_budget
from services.extractor.cancel import SourceCancelledError
from services.extractor.config import ExtractOptions
from services.extractor.outcomes import ACTOR, RUNNING, Publish, finish_if_done
from services.extractor.ports import ExtractorStore
from services.extractor.prompts import EXTRACT_SYSTEM, PROMPT_VERSION, extraction_message
from services.extractor.tools import EMIT_KNOWLEDGE_GRAPH, KnowledgeGraph
from services.extractor.uploads import completed_duplicate
from shared.bus import ChunkExtracted, ExtractedRelation, Topic, derived_event_id
from shared.errors import BadInputError, NotFoundError, R42Error, is_transient
from shared.kb import KNOWN_IDS_LIMIT, chunk_text, is_kebab_id, to_kebab_id
from shared.llm import (
    Limiter,
    LLMOutputError,
    LLMResult,
    LLMValidationError,
    attempt_budget,
    call_llm,
)
from shared.store import HeldLease

log = logging.getLogger(__name__)

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
MAX_SENTENCES = 3


class ChunkFailedError(R42Error):
    """Extracting one chunk failed; transient when its cause is."""

    def __init__(self, index: int, count: int, cause: BaseException) -> None:
        super().__init__(f"chunk {index + 1}/{count}: {type(cause).__name__}: {cause}")
        self.transient = is_transient(cause)


@dataclass(frozen=True)
class ExtractResult:
    """What the LLM step did for a source."""

    status: str
    chunks_total: int = 0
    chunks_extracted: int = 0
    duplicate_of: str | None = None


def first_sentences(text: str, limit: int = MAX_SENTENCES) -> str:
    """At most `limit` sentences of text (descriptions stay short)."""
    parts = _SENTENCE_END.split(text.strip())
    return " ".join(parts[:limit]).strip()


def clean_id(raw: str) -> str | None:
    """A kebab-case topic id from what the model sent (None if it has no letters or digits)."""
    value = raw.strip()
    if is_kebab_id(value):
        return value
    try:
        return to_kebab_id(value)
    except ValueError:
        return None


def to_bus_payload(
    topics: Iterable[Any], relations: Iterable[Any]
) -> tuple[list[Topic], list[ExtractedRelation]]:
    """Validated tool output as bus payloads: ids normalised, descriptions ≤ 3 sentences."""
    out_topics: dict[str, Topic] = {}
    for item in topics:
        topic_id = clean_id(item.id)
        if topic_id is None:
            continue
        out_topics[topic_id] = Topic(
            id=topic_id,
            label=item.label,
            type=item.type,
            description=first_sentences(item.description),
            learning_relevance=item.learning_relevance,
        )
    out_relations = []
    for item in relations:
        source, target = clean_id(item.source), clean_id(item.target)
        if source is None or target is None:
            continue
        out_relations.append(
            ExtractedRelation(source=source, target=target, type=item.type,
                              description=item.description or None)
        )  # fmt: skip
    return list(out_topics.values()), out_relations


async def ask_with_output_retries(*, task: str, retries: int, **kwargs: Any) -> LLMResult:
    """call_llm, asking again (up to `retries` times) when the tool input is invalid."""
    for attempt in range(retries + 1):
        try:
            return await call_llm(task=task, **kwargs)
        except (LLMValidationError, LLMOutputError) as exc:
            if attempt == retries:
                raise
            log.warning("%s: invalid model output (attempt %d), asking again: %s",
                        task, attempt + 1, exc)  # fmt: skip
    raise AssertionError("unreachable")


async def extract_chunk(
    *,
    source_id: str,
    source_name: str,
    chunk: str,
    index: int,
    count: int,
    known_ids: Iterable[str],
    limiter: Limiter | None,
    options: ExtractOptions,
    correlation_id: str = "",
) -> ChunkExtracted:
    """One chunk through the forced emit_knowledge_graph tool, as a chunk.extracted event."""
    user = extraction_message(
        known_ids=known_ids, name=source_name, chunk=chunk, index=index, count=count
    )
    result = await ask_with_output_retries(
        task="extractor.chunk", retries=options.output_retries, tier="standard",
        system=EXTRACT_SYSTEM, user=user, tools=[EMIT_KNOWLEDGE_GRAPH],
        tool_choice=EMIT_KNOWLEDGE_GRAPH, limiter=limiter, max_tokens=options.max_output_tokens,
    )  # fmt: skip
    graph = result.tool_uses[0].parsed
    assert isinstance(graph, KnowledgeGraph)
    topics, relations = to_bus_payload(graph.topics, graph.relations)
    return ChunkExtracted(
        # Derived: a re-extraction after a crash re-publishes the same event id (deduped).
        event_id=derived_event_id(ChunkExtracted.SUBJECT, source_id, str(index)),
        correlation_id=correlation_id,
        actor=ACTOR,
        source_id=source_id,
        chunk_index=index,
        chunk_count=count,
        topics=topics,
        relations=relations,
        prompt_version=PROMPT_VERSION,
    )


async def _known_ids(store: ExtractorStore) -> list[str]:
    """The 200 most recently updated ids, oldest first: one bounded query, not the graph.

    Read once per source; the ids of this source's own chunks are appended as they come.
    """
    return list(reversed(await store.topics.recent_ids(KNOWN_IDS_LIMIT)))  # newest first


async def _check_running(store: ExtractorStore, source_id: str) -> None:
    # The store status is the cancel signal a replica that missed the broadcast still sees.
    source = await store.sources.get(source_id)
    if source is None:
        raise NotFoundError(f"source {source_id} was deleted during extraction")
    if source.status not in RUNNING:
        raise SourceCancelledError(source_id)


async def extract_source(
    *,
    store: ExtractorStore,
    source_id: str,
    publish: Publish,
    limiter: Limiter | None,
    options: ExtractOptions,
    correlation_id: str = "",
    lease: HeldLease | None = None,
) -> ExtractResult:
    """Extract every chunk not merged yet and publish chunk.extracted for each.

    Resumable: chunks with a merge mark are skipped, so a restart continues at the first
    unmerged chunk. Completion is the merge step's job (it sees the last merge). Under the
    source's lease (runner.py) each model call and each publish follows a lease check, so a
    replica that stalled past it (and was taken over) stops instead of extracting again.
    """
    source = await store.sources.get(source_id)
    if source is None:
        raise NotFoundError(f"source {source_id} does not exist")
    if source.status not in RUNNING:
        log.info("source %s is %s; nothing to do", source_id, source.status)
        return ExtractResult(status=source.status)
    duplicate = await completed_duplicate(
        store, name=source.name, sha256=source.sha256, exclude=source_id
    )
    if duplicate is not None:
        log.info("source %s skipped: %s with the same content was already extracted (%s)",
                 source_id, source.name, duplicate.id)  # fmt: skip
        await store.sources.set_chunks_total(source_id, 0)
        await finish_if_done(store, source_id, publish)
        return ExtractResult(status="completed", duplicate_of=duplicate.id)
    text = await store.source_texts.get(source_id)
    if text is None:
        raise BadInputError(f"the text of source {source_id} is missing from the store")
    if await store.sources.set_status(source_id, "processing", only_from=RUNNING) is None:
        raise SourceCancelledError(source_id)
    chunks = chunk_text(
        text, max_chars=options.max_chunk_chars, overlap_chars=options.overlap_chars
    )
    await store.sources.set_chunks_total(source_id, len(chunks))
    # Held results (merged once their predecessors are) need no second model call either.
    merged = await store.sources.merged_chunks(source_id)
    merged |= set(await store.pending_merges.held_indexes(source_id))
    known = await _known_ids(store)
    earlier_ids: list[str] = []
    extracted = 0
    for index, chunk in enumerate(chunks):
        if index in merged:
            continue  # merged (or held) before a restart: never asked again
        await _check_running(store, source_id)
        if lease is not None:
            await lease.check()
        # Every API attempt at this chunk, in-call retries and redeliveries alike, counts
        # against one budget: a persistent 5xx costs at most CHUNK_ATTEMPTS calls.
        budget = chunk_budget(store, source_id, index)
        try:
            with attempt_budget(budget):
                event = await extract_chunk(
                    source_id=source_id, source_name=source.name, chunk=chunk, index=index,
                    count=len(chunks), known_ids=[*known, *earlier_ids], limiter=limiter,
                    options=options, correlation_id=correlation_id,
                )  # fmt: skip
        except Exception as exc:  # named with its chunk, keeping transient vs permanent
            raise ChunkFailedError(index, len(chunks), exc) from exc
        await budget.succeeded()
        earlier_ids.extend(t.id for t in event.topics)
        if lease is not None:
            await lease.check()  # taken over during the call: the new holder publishes it
        await publish(event)
        extracted += 1
    # Everything may have been merged already (a restart after the last merge).
    await finish_if_done(store, source_id, publish)
    after = await store.sources.get(source_id)
    return ExtractResult(status=after.status if after else "processing",
                         chunks_total=len(chunks), chunks_extracted=extracted)  # fmt: skip
