"""content.requested → generate what is missing or stale → content.ready; idempotent.

A request is remembered by event id (the store's idempotency keys, scope
`content.requested`, kept a week) right after its content is stored and before
`content.ready` goes out. A redelivery of a remembered request republishes the same
`content.ready` (its event id is derived from the request's, so JetStream dedupes it) and
never calls the model again, even when the request said `force`. Without `force`, cached
content answers a new request directly."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from services.content.generate import ensure_content
from services.content.locks import DEFAULT_TTL_S, DEFAULT_WAIT_S, topic_lease
from services.content.ports import ContentStore
from services.content.topics import resolve_or_create
from shared.bus import ContentReady, ContentRequested, Event, derived_event_id
from shared.errors import R42Error, is_transient
from shared.store import LeaseLostError, utcnow

log = logging.getLogger(__name__)

ACTOR = "content"
HANDLED_SCOPE = "content.requested"
HANDLED_TTL_S = 7 * 24 * 3600.0
_MAX_ERROR = 4000

Publish = Callable[[Event], Awaitable[Any]]


async def handled_outcome(store: ContentStore, event_id: str) -> dict[str, Any] | None:
    """What a request with this event id produced, if it was handled before."""
    record = await store.idempotency.get(HANDLED_SCOPE, event_id)
    return dict(record.value) if record is not None else None


async def remember(store: ContentStore, record: dict[str, Any]) -> None:
    """Record a handled request (forgotten after a week, long past any redelivery)."""
    await store.idempotency.put_if_absent(
        HANDLED_SCOPE, record["event_id"], record, ttl_s=HANDLED_TTL_S
    )


def ready_event(
    request: ContentRequested, *, topic_id: str, ok: bool, error: str | None = None
) -> ContentReady:
    """The answer to a request (same event id every time, so re-publishes dedupe)."""
    return ContentReady(
        event_id=derived_event_id(ContentReady.SUBJECT, request.event_id),
        correlation_id=request.correlation_id,
        actor=ACTOR,
        topic_id=topic_id,
        content_type=request.content_type,
        ok=ok,
        error=error,
        content_ref=f"{topic_id}/{request.content_type}" if ok else None,
        reply_to=request.reply_to,
    )


def user_error(exc: BaseException) -> str:
    """A failure as the requester may read it (no internals of unexpected errors)."""
    if isinstance(exc, R42Error):
        prefix = "temporarily unavailable, try again later: " if is_transient(exc) else ""
        return f"{prefix}{exc}"[:_MAX_ERROR]
    return f"internal error in the content service ({type(exc).__name__})"


async def _answer_again(
    event: ContentRequested, previous: dict[str, Any], publish: Publish
) -> ContentReady:
    log.info("content.requested %s was handled before; re-sending its answer", event.event_id)
    ready = ready_event(
        event, topic_id=previous["topic_id"], ok=previous["ok"], error=previous.get("error")
    )
    await publish(ready)
    return ready


async def handle_content_requested(
    event: ContentRequested,
    *,
    store: ContentStore,
    publish: Publish,
    last_attempt: bool = True,
    lease_wait: float = DEFAULT_WAIT_S,
    lease_ttl: float = DEFAULT_TTL_S,
) -> ContentReady:
    """Answer one request; transient failures raise (retry) unless this is the last attempt.

    Generation of a topic holds its lease (services/content/locks.py), so concurrent
    requests for one topic generate once and the others are answered from the cache.
    """
    previous = await handled_outcome(store, event.event_id)
    if previous is not None:
        return await _answer_again(event, previous, publish)
    record: dict[str, Any] = {"event_id": event.event_id, "topic_id": event.topic_id}
    try:
        topic = await resolve_or_create(store, ref=event.topic_id, requested_by=event.user_id)
        record["topic_id"] = topic.id
        async with topic_lease(store, topic.id, wait=lease_wait, ttl=lease_ttl) as lease:
            # A duplicate of this very request may have finished while we waited.
            previous = await handled_outcome(store, event.event_id)
            if previous is None:
                outcome = await ensure_content(
                    store, topic=topic, content_type=event.content_type, force=event.force,
                    lease=lease,
                )  # fmt: skip
                record.update(ok=True, error=None, generated=list(outcome.generated))
                # Remembered inside the lease, so a waiting duplicate finds it.
                await remember(store, {**record, "at": utcnow().isoformat()})
    except LeaseLostError:
        # Taken over while this worker stalled: the new holder answers and records it; this
        # delivery records nothing (a redelivery is answered from that record).
        log.warning("content.requested %s: lease lost mid-way; left to its new holder",
                    event.event_id)  # fmt: skip
        raise
    except Exception as exc:
        if is_transient(exc) and not last_attempt:
            raise
        if not isinstance(exc, R42Error):
            log.exception("content.requested %s failed unexpectedly", event.event_id)
        previous = None
        record.update(ok=False, error=user_error(exc), generated=[])
        await remember(store, {**record, "at": utcnow().isoformat()})
    if previous is not None:
        return await _answer_again(event, previous, publish)
    ready = ready_event(event, topic_id=record["topic_id"], ok=record["ok"], error=record["error"])
    await publish(ready)
    return ready
