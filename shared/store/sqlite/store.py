"""The SQLite store: the embedded default, one file in the data dir."""

from __future__ import annotations

import sqlite3
from types import TracebackType

from shared.store.models import ChunkMark, KbChangeResult, KbChanges
from shared.store.models_provenance import UndoLabel
from shared.store.sqlite.audit import SqliteAudit
from shared.store.sqlite.chat import SqliteFeedback, SqliteProposals, SqliteUploadMessages
from shared.store.sqlite.content import SqliteContent, SqliteQuizBanks
from shared.store.sqlite.db import SqliteDb
from shared.store.sqlite.kb import SqliteRelations, SqliteTopics, apply_changes
from shared.store.sqlite.leases import SqliteIdempotency, SqliteLocks
from shared.store.sqlite.migrations import migrate
from shared.store.sqlite.ops import SqliteCurriculum, SqliteHandbookSync, SqliteLlmCalls
from shared.store.sqlite.pending import SqlitePendingMerges
from shared.store.sqlite.provenance import SqliteCuration, SqliteProvenance
from shared.store.sqlite.quiz import SqliteQuizAttempts, SqliteScores
from shared.store.sqlite.records import (
    SqliteConversationRefs,
    SqliteCurrentSources,
    SqliteHandbookTrees,
    SqliteHeldChanges,
    SqliteKbVersion,
)
from shared.store.sqlite.social import SqliteSuggestions, SqliteThreads
from shared.store.sqlite.sources import SqliteSources, SqliteSourceTexts
from shared.store.sqlite.state import SqliteCustomTopics, SqliteFlags, SqliteMergeProgress
from shared.store.sqlite.tombstones import SqliteTombstones
from shared.store.sqlite.turns import SqliteTurns
from shared.store.sqlite.undo import SqliteChangeLog, log_before_image
from shared.store.sqlite_file import current_version


class SqliteStore:
    """Store on one SQLite file (WAL, safe with several writing processes)."""

    backend = "sqlite"

    def __init__(self, path: str, *, busy_timeout_s: float = 30.0) -> None:
        self.db = SqliteDb(path, busy_timeout_s=busy_timeout_s)
        self.topics = SqliteTopics(self.db)
        self.relations = SqliteRelations(self.db)
        self.sources = SqliteSources(self.db)
        self.source_texts = SqliteSourceTexts(self.db)
        self.content = SqliteContent(self.db)
        self.quiz_banks = SqliteQuizBanks(self.db)
        self.quiz_attempts = SqliteQuizAttempts(self.db)
        self.scores = SqliteScores(self.db)
        self.threads = SqliteThreads(self.db)
        self.suggestions = SqliteSuggestions(self.db)
        self.llm_calls = SqliteLlmCalls(self.db)
        self.handbook_sync = SqliteHandbookSync(self.db)
        self.curriculum = SqliteCurriculum(self.db)
        self.proposals = SqliteProposals(self.db)
        self.turns = SqliteTurns(self.db)
        self.feedback = SqliteFeedback(self.db)
        self.upload_messages = SqliteUploadMessages(self.db)
        self.merge_progress = SqliteMergeProgress(self.db)
        self.idempotency = SqliteIdempotency(self.db)
        self.custom_topics = SqliteCustomTopics(self.db)
        self.flags = SqliteFlags(self.db)
        self.locks = SqliteLocks(self.db)
        self.provenance = SqliteProvenance(self.db)
        self.curation = SqliteCuration(self.db)
        self.change_log = SqliteChangeLog(self.db)
        self.held_changes = SqliteHeldChanges(self.db)
        self.handbook_trees = SqliteHandbookTrees(self.db)
        self.kb_version = SqliteKbVersion(self.db)
        self.current_sources = SqliteCurrentSources(self.db)
        self.conversation_refs = SqliteConversationRefs(self.db)
        self.audit = SqliteAudit(self.db)
        self.pending_merges = SqlitePendingMerges(self.db)
        self.tombstones = SqliteTombstones(self.db)

    @classmethod
    async def open(cls, path: str, *, busy_timeout_s: float = 30.0) -> SqliteStore:
        """Open (creating if needed) and migrate the store at path."""
        store = cls(path, busy_timeout_s=busy_timeout_s)
        await store.db.open()
        try:
            await store.db.write(migrate)
        except BaseException:
            await store.close()
            raise
        return store

    async def apply_kb_changes(
        self, changes: KbChanges, *, chunk: ChunkMark | None = None, undo: UndoLabel | None = None
    ) -> KbChangeResult:
        """Apply a graph change in one BEGIN IMMEDIATE transaction (all or nothing)."""

        def run(conn: sqlite3.Connection) -> KbChangeResult:
            if undo is not None and not log_before_image(conn, changes, undo):
                return KbChangeResult(applied=False)  # this batch was applied before
            return apply_changes(conn, changes, chunk)

        return await self.db.write(run)

    async def schema_version(self) -> int:
        """The migration version the store is at."""
        return await self.db.read(current_version)

    async def close(self) -> None:
        """Close the connection and its worker thread."""
        await self.db.close()

    async def __aenter__(self) -> SqliteStore:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
