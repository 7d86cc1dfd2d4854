"""Admin-side calls of the client layer: sources, reviews, diagnostics, graph, App Home."""

from __future__ import annotations

import hashlib
import logging
import secrets

from services.gateway import queries
from services.gateway.client_base import ClientBase
from services.gateway.models import (
    Diagnostics,
    GraphView,
    HomeData,
    IngestResult,
    SuggestionDecision,
)
from services.gateway.uploads import check_text
from shared.bus import (
    KbDelta,
    KbDeltaDecided,
    SourceCancelled,
    SourceUploaded,
    derived_event_id,
    publish_event,
)
from shared.errors import BadInputError, NotFoundError, R42Error
from shared.store import Source, Suggestion

log = logging.getLogger(__name__)

CANCELLABLE = frozenset({"pending", "processing"})


class AdminCalls(ClientBase):
    """Sources, suggestion reviews and read-only views."""

    # -- sources --------------------------------------------------------------------------

    async def sources(self, *, limit: int = 20) -> list[Source]:
        """The newest sources and their status."""
        return await self.store.sources.list(limit=limit)

    async def ingest_text(self, *, name: str, text: str, user_id: str) -> IngestResult:
        """Store a source's text and announce it (source.uploaded); admins only."""
        self.require_admin(user_id, "bronnen toevoegen")
        name = " ".join(name.split())[:200]
        if not name:
            raise BadInputError("geef de bron een naam")
        text = check_text(text.encode("utf-8"), max_bytes=self.settings.max_upload_bytes)
        data = text.encode("utf-8")
        sha = hashlib.sha256(data).hexdigest()
        for earlier in await self.store.sources.find_by_sha256(sha):
            if earlier.status in ("pending", "processing", "completed"):
                return IngestResult(source=earlier, duplicate=True)
        source_id = f"src-{sha[:12]}-{secrets.token_hex(3)}"
        # Text first: a source row never points at missing text.
        await self.store.source_texts.put(source_id, text)
        source = await self.store.sources.create(
            Source(id=source_id, name=name, sha256=sha, who=user_id)
        )
        try:
            await self._publish(
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
            await self.store.sources.set_status(source_id, "failed", error=f"not announced: {exc}")
            raise
        return IngestResult(source=source)

    async def cancel_source(self, *, source_id: str, user_id: str) -> Source:
        """Ask the extractor to stop a running source; admins only."""
        self.require_admin(user_id, "bronnen annuleren")
        source = await self.store.sources.get(source_id)
        if source is None:
            raise NotFoundError(f"bron {source_id} bestaat niet")
        if source.status not in CANCELLABLE:
            raise BadInputError(f"bron {source.name} is al {source.status}")
        await self._publish(SourceCancelled(actor=user_id, source_id=source_id))
        return source

    # -- reviews --------------------------------------------------------------------------

    async def pending_suggestions(self, *, user_id: str) -> list[Suggestion]:
        """Suggestions waiting for a decision; admins only."""
        self.require_admin(user_id, "voorstellen bekijken")
        return await self.store.suggestions.list(status="pending", limit=50)

    async def decide_suggestion(
        self, *, suggestion_id: str, user_id: str, approve: bool
    ) -> SuggestionDecision:
        """Approve / Reject (admins only): publish kb.delta.decided for the extractor to apply.

        The extractor, the graph's one writer, applies it and marks the suggestion decided.
        The event id is derived from the suggestion, so when two admins click at once
        JetStream keeps the first decision and reports the second as a duplicate.
        """
        if not self.is_admin(user_id):
            return SuggestionDecision(status="forbidden")
        suggestion = await self.store.suggestions.get(suggestion_id)
        if suggestion is None:
            return SuggestionDecision(status="not_found")
        if suggestion.status != "pending":
            return SuggestionDecision(
                status="already_decided",
                suggestion=suggestion,
                decision=suggestion.status,
                decided_by=suggestion.decided_by,
            )
        decision = "approved" if approve else "rejected"
        event = KbDeltaDecided(
            event_id=derived_event_id(KbDeltaDecided.SUBJECT, suggestion.id),
            correlation_id=str(suggestion.context.get("proposal_id") or suggestion.id)[:200],
            actor=user_id,
            suggestion_id=suggestion.id,
            decision=decision,
            decided_by=user_id,
            delta=KbDelta.model_validate(suggestion.delta),
        )
        ack = await publish_event(self.broker, event, namespace=self.namespace)
        if ack.duplicate:
            log.info("suggestion %s: a decision was already published", suggestion.id)
            return SuggestionDecision(status="already_decided", suggestion=suggestion)
        return SuggestionDecision(
            status="decided", suggestion=suggestion, decision=decision, decided_by=user_id
        )

    # -- reads ------------------------------------------------------------------------------

    async def diagnostics(self, *, user_id: str) -> Diagnostics:
        """Recent LLM calls and cost; admins only."""
        self.require_admin(user_id, "de diagnostiek bekijken")
        return await queries.diagnostics(self.store)

    async def graph(self, query: str) -> GraphView:
        """A topic and its neighbours."""
        return await queries.graph_view(self.store, query)

    async def home(self, *, user_id: str) -> HomeData:
        """App Home for a user (admin sections only for admins)."""
        return await queries.home_data(self.store, user_id=user_id, admin=self.is_admin(user_id))
