"""Resuming an interrupted `r42 ingest`: the same file continues under its own source id.

A killed in-process ingest leaves its source pending or processing, with a merge mark per
chunk already merged. Running `r42 ingest` on the same file again finds that source (same
name, same content) and resumes it: merged chunks are not asked again. A lease per source
(renewed while this process works on it) tells a live concurrent ingest from a dead one;
a killed process's lease runs out after LEASE_TTL_S.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterable

from services.extractor.ports import ExtractorStore
from services.extractor.uploads import normalise_text, sha256_text
from shared.bus import SourceUploaded, derived_event_id
from shared.errors import BadInputError
from shared.store import LockBusyError, LockRepository, Source, hold_lock

LEASE_TTL_S = 6.0
LEASE_WAIT_S = 15.0
_UNFINISHED = ("pending", "processing")


async def unfinished_source(store: ExtractorStore, *, name: str, text: str) -> Source | None:
    """An interrupted source of this file (same name and content), if there is one."""
    digest = sha256_text(normalise_text(text))
    for source in await store.sources.find_by_sha256(digest):
        if source.name == name and source.status in _UNFINISHED:
            return source
    return None


def resume_event(source: Source, text: str, *, actor: str) -> SourceUploaded:
    """The source's own source.uploaded again (the same derived id: a re-publish dedupes)."""
    return SourceUploaded(
        event_id=derived_event_id(SourceUploaded.SUBJECT, source.id),
        actor=actor,
        source_id=source.id,
        name=source.name,
        sha256=source.sha256,
        text_ref=source.id,
        size=len(normalise_text(text).encode("utf-8")),
        uploaded_by=source.who or actor,
    )


@contextlib.asynccontextmanager
async def ingest_leases(locks: LockRepository, source_ids: Iterable[str]) -> AsyncIterator[None]:
    """Hold the lease of every source this process ingests, for as long as it does."""
    async with contextlib.AsyncExitStack() as stack:
        for source_id in source_ids:
            try:
                lease = hold_lock(
                    locks, f"ingest:{source_id}", ttl_s=LEASE_TTL_S, wait_s=LEASE_WAIT_S
                )
                await stack.enter_async_context(lease)
            except LockBusyError:
                raise BadInputError(
                    f"source {source_id} is being ingested by another `r42 ingest`; "
                    "wait for it or cancel it with `r42 sources cancel`"
                ) from None
        yield
