"""Running one source to its end: cancellation and failures become the source's status."""

from __future__ import annotations

import logging
from typing import Any

from services.extractor.cancel import AlreadyRunningError, SourceCancelledError, SourceTasks
from services.extractor.config import ExtractOptions
from services.extractor.outcomes import Publish, fail_source, mark_cancelled
from services.extractor.pipeline import ExtractResult, extract_source
from services.extractor.ports import ExtractorStore
from shared.errors import TransientError, is_transient
from shared.llm import Limiter
from shared.store import LeaseLostError, LockBusyError, hold_lock

log = logging.getLogger(__name__)

LEASE_PREFIX = "extract:"


def describe_error(exc: BaseException) -> str:
    """The reason stored on a failed source (error classes never carry secrets)."""
    text = str(exc).strip()
    return text if text else type(exc).__name__


async def _leased(
    *, store: ExtractorStore, source_id: str, options: ExtractOptions, **kwargs: Any
) -> ExtractResult:
    """extract_source under the source's lease, one holder across replicas.

    A second holder waits (up to twice the TTL: a stalled holder's lease lapses by then);
    the lease lapses when JetStream would redeliver the source to another replica.
    """
    ttl = options.lease_ttl_s
    async with hold_lock(store.locks, f"{LEASE_PREFIX}{source_id}", ttl_s=ttl,
                         wait_s=2 * ttl, poll_s=min(0.25, ttl / 4)) as lease:  # fmt: skip
        return await extract_source(store=store, source_id=source_id, options=options,
                                    lease=lease, **kwargs)  # fmt: skip


async def run_source(
    *,
    store: ExtractorStore,
    source_id: str,
    publish: Publish,
    limiter: Limiter | None,
    options: ExtractOptions,
    tasks: SourceTasks,
    last_attempt: bool,
    correlation_id: str = "",
) -> ExtractResult:
    """Extract a source as a cancellable task; record cancellation or failure.

    A transient error is re-raised unless this is the last attempt, so the caller's
    redelivery resumes the source at its first unmerged chunk; anything else (or a
    transient error on the last attempt) marks the source failed with the reason.
    """
    work = _leased(
        store=store, source_id=source_id, publish=publish, limiter=limiter,
        options=options, correlation_id=correlation_id,
    )  # fmt: skip
    try:
        return await tasks.run(source_id, work)
    except LockBusyError:
        # Another replica holds the source's live lease and extracts it; it completes it.
        if not last_attempt:
            raise
        log.info("source %s is being extracted by another replica; leaving it to it", source_id)
        return ExtractResult(status="processing")
    except LeaseLostError:
        # This replica stalled past the lease and another took the source over: no failure.
        if not last_attempt:
            raise
        log.warning("source %s was taken over by another replica mid-way", source_id)
        return ExtractResult(status="processing")
    except AlreadyRunningError as exc:
        # A redelivery that reached the process while it worked on the source: it waited
        # for that run, and asks for another delivery only where that run would have.
        log.info("source %s was already being extracted here; duplicate delivery waited for it",
                 source_id)  # fmt: skip
        if exc.failure is not None and is_transient(exc.failure) and not last_attempt:
            raise TransientError(f"source {source_id}: {exc.failure}") from None
        return ExtractResult(status="processing")
    except SourceCancelledError:
        await mark_cancelled(store, source_id, publish)
        return ExtractResult(status="cancelled")
    except Exception as exc:
        if is_transient(exc) and not last_attempt:
            log.warning("source %s hit a transient error; it will resume: %s", source_id, exc)
            raise
        await fail_source(store, source_id, describe_error(exc), publish)
        return ExtractResult(status="failed")
