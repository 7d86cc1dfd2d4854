"""The extractor's view of the store: it owns the graph, so it alone gets the KG writer."""

from __future__ import annotations

from typing import Protocol

from shared.store import (
    AuditRepository,
    ChangeLogRepository,
    ChunkMark,
    CurationRepository,
    CurrentSourceRepository,
    FlagRepository,
    HandbookSyncRepository,
    HandbookTreeRepository,
    HeldChangeRepository,
    IdempotencyRepository,
    KbChangeResult,
    KbChanges,
    KbVersionRepository,
    LockRepository,
    MergeProgressRepository,
    PendingMergeRepository,
    ProvenanceRepository,
    RelationRepository,
    SourceRepository,
    SourceTextRepository,
    SuggestionRepository,
    TombstoneRepository,
    TopicRepository,
)


class ExtractorStore(Protocol):
    """Sources, their texts, the graph (read and write), suggestions, handbook sync state."""

    @property
    def topics(self) -> TopicRepository:
        """Topics (the KG owner's)."""
        ...

    @property
    def relations(self) -> RelationRepository:
        """Relations (the KG owner's)."""
        ...

    @property
    def sources(self) -> SourceRepository:
        """Sources and their extraction state."""
        ...

    @property
    def source_texts(self) -> SourceTextRepository:
        """Uploaded source texts."""
        ...

    @property
    def suggestions(self) -> SuggestionRepository:
        """Suggestions the owner decides."""
        ...

    @property
    def handbook_sync(self) -> HandbookSyncRepository:
        """Blob shas of handbook files already ingested."""
        ...

    @property
    def curation(self) -> CurationRepository:
        """Which topic fields an admin set (extraction keeps them)."""
        ...

    @property
    def provenance(self) -> ProvenanceRepository:
        """Which sources assert each topic and relation."""
        ...

    @property
    def current_sources(self) -> CurrentSourceRepository:
        """The current source of each document name."""
        ...

    @property
    def held_changes(self) -> HeldChangeRepository:
        """Extractions over the bulk bound, held for review."""
        ...

    @property
    def change_log(self) -> ChangeLogRepository:
        """Before-images of bulk changes, for undo."""
        ...

    @property
    def handbook_trees(self) -> HandbookTreeRepository:
        """The cached handbook folder listings."""
        ...

    @property
    def kb_version(self) -> KbVersionRepository:
        """The chained version hash kb.updated carries."""
        ...

    @property
    def merge_progress(self) -> MergeProgressRepository:
        """Running merge counts per source."""
        ...

    @property
    def pending_merges(self) -> PendingMergeRepository:
        """Chunk results held for their predecessors; relations waiting for an endpoint."""
        ...

    @property
    def tombstones(self) -> TombstoneRepository:
        """Topics an admin deleted: extraction skips them."""
        ...

    @property
    def flags(self) -> FlagRepository:
        """Markers such as the sample handbook having been queued."""
        ...

    @property
    def locks(self) -> LockRepository:
        """Named leases: one per source being extracted, across replicas."""
        ...

    @property
    def idempotency(self) -> IdempotencyRepository:
        """Short-lived records: stored graph-analysis plans."""
        ...

    @property
    def audit(self) -> AuditRepository:
        """Admin actions on the graph, refusals included."""
        ...

    async def apply_kb_changes(
        self, changes: KbChanges, *, chunk: ChunkMark | None = None
    ) -> KbChangeResult:
        """Apply a graph change atomically (with a chunk: record it merged, once only)."""
        ...
