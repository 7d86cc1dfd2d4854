"""Sources: list, ingest pasted or uploaded text (admins), cancel, delete, the handbook sync."""

from __future__ import annotations

import uuid

from services.gateway.core.context import CoreContext
from services.gateway.core.models import IngestResult
from services.gateway.core.source_delete import ask_delete, refuse
from services.gateway.core.uploads import check_text
from shared.bus import NoResponderError, SourceCancelled, request
from shared.bus.extractor_rpc import (
    REGISTER_UPLOAD_SUBJECT,
    SYNC_HANDBOOK_SUBJECT,
    HandbookSyncReply,
    HandbookSyncRequest,
    RegisterUploadReply,
    RegisterUploadRequest,
    SyncWaiting,
    named,
)
from shared.bus.objects import delete_source_object, put_source_object
from shared.bus.source_rpc import SourceDeleteReply
from shared.errors import BadInputError, BusError, NotFoundError
from shared.store import AuditSurface, Source

CANCELLABLE = frozenset({"pending", "processing"})
SYNC_TIMEOUT_S = 900.0
REGISTER_TIMEOUT_S = 60.0
NOT_REGISTERED = (
    "de bron kan nu niet worden ingelezen (geen extractor beantwoordt "
    f"{REGISTER_UPLOAD_SUBJECT}); probeer het later opnieuw"
)
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
        """Register a text with the extractor (rpc.extractor.register_upload); admins only."""
        self.ctx.require_admin(user_id, "bronnen toevoegen")
        name = " ".join(name.split())[:200]
        if not name:
            raise BadInputError("geef de bron een naam")
        # Surfaces pass extracted text (markdown): checked again as such, whatever the file was.
        text = check_text(
            text.encode("utf-8"), max_bytes=self.ctx.settings.max_upload_bytes, name="tekst.md"
        )
        store = self.ctx.store
        # Staged in r42-sources like any uploader's file (a text can exceed a NATS message).
        text_ref = f"staged-{uuid.uuid4().hex}"
        await put_source_object(self.ctx.broker.connection, text_ref, text.encode("utf-8"))
        try:
            reply = await request(
                self.ctx.broker,
                REGISTER_UPLOAD_SUBJECT,
                RegisterUploadRequest(name=name, text_ref=text_ref, uploaded_by=user_id),
                response_model=RegisterUploadReply,
                timeout=REGISTER_TIMEOUT_S,
                namespace=self.ctx.namespace,
            )
        except NoResponderError:
            raise BusError(NOT_REGISTERED) from None
        finally:
            # The extractor drops the staging once registered; never leave it behind on an error.
            await delete_source_object(self.ctx.broker.connection, text_ref)
        source = await store.sources.get(reply.source_id)
        if source is None:
            raise NotFoundError(f"bron {reply.source_id} is verdwenen")
        return IngestResult(source=source, duplicate=reply.duplicate)

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

    async def delete(
        self, *, source_id: str, user_id: str, surface: AuditSurface, confirm: bool,
        max_deletions: int | None = None,
    ) -> SourceDeleteReply:  # fmt: skip
        """What deleting a source takes (confirm False), or delete it; the KG owner decides."""
        return await ask_delete(self.ctx, source_id=source_id, user_id=user_id, surface=surface,
                                confirm=confirm, max_deletions=max_deletions)  # fmt: skip

    async def refuse_delete(self, *, user_id: str, source_id: str, surface: AuditSurface) -> None:
        """Audit a delete a surface refused itself (a non-admin's Verwijderen)."""
        await refuse(self.ctx, user_id=user_id, source_id=source_id, surface=surface)

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
        except NoResponderError:
            raise BusError(NOT_SERVED) from None


def describe_sync(reply: HandbookSyncReply) -> str:
    """One line on a finished sync."""
    line = (
        f"handboek gesynchroniseerd: {reply.changed} bestand(en) bijgewerkt, "
        f"{reply.unchanged} ongewijzigd, {reply.failed} mislukt"
    )
    if reply.skipped:
        more = " …" if reply.skipped > len(reply.skipped_shown) else ""
        line += (f", {reply.skipped} overgeslagen (leeg, zonder tekst of een formaat dat R42 "
                 f"niet leest: {', '.join(reply.skipped_shown)}{more})")  # fmt: skip
    notes = "; ".join(n for n in (reply.message, describe_waiting(reply.waiting)) if n)
    return f"{line}. {notes}" if notes else line


def describe_waiting(waiting: SyncWaiting | None) -> str:
    """The sync's relations that wait for topics no file defines (empty when none are new)."""
    if waiting is None:
        return ""
    parts = []
    if n := waiting.newly_waiting:
        listed = named(waiting.newly_shown, n)
        parts.append(f"{n} relatie(s) wachten op onderwerpen die geen bestand definieert: {listed}")
    if n := waiting.expired:
        listed, days = named(waiting.expired_shown, n), waiting.max_wait_days
        parts.append(f"{n} relatie(s) vervallen na {days} dagen wachten: {listed}")
    return "; ".join(parts)
