"""Sources: list, ingest pasted or uploaded text (admins), cancel, the handbook sync."""

from __future__ import annotations

import hashlib
import secrets

from services.gateway.core.context import CoreContext
from services.gateway.core.models import IngestResult
from services.gateway.core.uploads import check_text
from shared.bus import SourceCancelled, SourceUploaded, derived_event_id, request
from shared.bus.extractor_rpc import (
    SYNC_HANDBOOK_SUBJECT,
    HandbookSyncReply,
    HandbookSyncRequest,
)
from shared.errors import BadInputError, BusError, NotFoundError, R42Error
from shared.store import Source

CANCELLABLE = frozenset({"pending", "processing"})
SYNC_TIMEOUT_S = 900.0
NOT_SERVED = (
    "de handbook-synchronisatie is nu niet beschikbaar (geen extractor beantwoordt "
    f"{SYNC_HANDBOOK_SUBJECT}); start hem met `r42 sync-handbook`"
)


class SourceCalls:
    """What admins do with sources; the list is open to everyone."""

    def __init__(self, ctx: CoreContext) -> None:
        self.ctx = ctx

    async def list(self, *, limit: int = 20) -> list[Source]:
        """The newest sources and their status."""
        return await self.ctx.store.sources.list(limit=limit)

    async def get(self, source_id: str) -> Source | None:
        """One source (None when it does not exist)."""
        return await self.ctx.store.sources.get(source_id)

    async def ingest_text(self, *, name: str, text: str, user_id: str) -> IngestResult:
        """Store a source's text and announce it (source.uploaded); admins only."""
        self.ctx.require_admin(user_id, "bronnen toevoegen")
        name = " ".join(name.split())[:200]
        if not name:
            raise BadInputError("geef de bron een naam")
        text = check_text(text.encode("utf-8"), max_bytes=self.ctx.settings.max_upload_bytes)
        data = text.encode("utf-8")
        sha = hashlib.sha256(data).hexdigest()
        for earlier in await self.ctx.store.sources.find_by_sha256(sha):
            if earlier.status in ("pending", "processing", "completed"):
                return IngestResult(source=earlier, duplicate=True)
        source_id = f"src-{sha[:12]}-{secrets.token_hex(3)}"
        # Text first: a source row never points at missing text.
        await self.ctx.store.source_texts.put(source_id, text)
        source = await self.ctx.store.sources.create(
            Source(id=source_id, name=name, sha256=sha, who=user_id)
        )
        try:
            await self.ctx.publish(
                SourceUploaded(
                    # Derived from the source: a re-publish is deduplicated by JetStream.
                    event_id=derived_event_id(SourceUploaded.SUBJECT, source_id),
                    actor=user_id,
                    source_id=source_id,
                    name=name,
                    sha256=sha,
                    text_ref=source_id,
                    size=len(data),
                    uploaded_by=user_id,
                )
            )
        except R42Error as exc:
            # Without the event nobody would ever extract it: say so on the source.
            await self.ctx.store.sources.set_status(
                source_id, "failed", error=f"not announced: {exc}"
            )
            raise
        return IngestResult(source=source)

    async def cancel(self, *, source_id: str, user_id: str) -> Source:
        """Ask the extractor to stop a running source; admins only."""
        self.ctx.require_admin(user_id, "bronnen annuleren")
        source = await self.ctx.store.sources.get(source_id)
        if source is None:
            raise NotFoundError(f"bron {source_id} bestaat niet")
        if source.status not in CANCELLABLE:
            raise BadInputError(f"bron {source.name} is al {source.status}")
        await self.ctx.publish(SourceCancelled(actor=user_id, source_id=source_id))
        return source

    async def sync_handbook(self, *, user_id: str) -> HandbookSyncReply:
        """Ask the extractor for a handbook sync (admins only); BusError when nobody serves it."""
        ctx = self.ctx
        ctx.require_admin(user_id, "het handboek synchroniseren")
        try:
            return await request(
                ctx.broker,
                SYNC_HANDBOOK_SUBJECT,
                HandbookSyncRequest(user_id=user_id),
                response_model=HandbookSyncReply,
                timeout=SYNC_TIMEOUT_S,
                namespace=ctx.namespace,
            )
        except BusError as exc:
            if "no service is answering" in str(exc):
                raise BusError(NOT_SERVED) from None
            raise


def describe_sync(reply: HandbookSyncReply) -> str:
    """One line on a finished sync."""
    line = (
        f"handboek gesynchroniseerd: {reply.changed} bestand(en) bijgewerkt, "
        f"{reply.unchanged} ongewijzigd, {reply.failed} mislukt"
    )
    return f"{line}. {reply.message}".strip() if reply.message else line
