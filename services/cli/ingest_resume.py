"""Resuming an interrupted `r42 ingest`: the same file continues under its own source id.

A killed in-process ingest leaves its source pending or processing, with a merge mark per
chunk already merged. Running `r42 ingest` on the same file again finds that source (same
name, same content) and resumes it: merged chunks are not asked again. A lease per source
(renewed while this process works on it) tells a live concurrent ingest from a dead one;
a killed process's lease runs out after LEASE_TTL_S.
"""

from __future__ import annotations

import contextlib
import hashlib
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


def upload_event(
    *, source_id: str, name: str, data: bytes, uploaded_by: str, actor: str
) -> SourceUploaded:
    """source.uploaded for a file put into r42-sources under the source's id (as any uploader).

    The event id derives from the source: a re-publish after a crash is deduplicated.
    """
    return SourceUploaded(
        event_id=derived_event_id(SourceUploaded.SUBJECT, source_id),
        actor=actor,
        source_id=source_id,
        name=name,
        sha256=hashlib.sha256(data).hexdigest(),
        text_ref=source_id,
        size=len(data),
        uploaded_by=uploaded_by,
    )


def resume_event(source: Source, data: bytes, *, actor: str) -> SourceUploaded:
    """The interrupted source's own source.uploaded again, for its file put there again."""
    return upload_event(source_id=source.id, name=source.name, data=data,
                        uploaded_by=source.who or actor, actor=actor)  # fmt: skip


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
