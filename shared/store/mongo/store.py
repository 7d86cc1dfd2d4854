"""The MongoDB store (PyMongo's async API); transactions when the server is a replica set."""

from __future__ import annotations

from types import TracebackType

from pymongo.errors import PyMongoError

from shared.store.models import ChunkMark, KbChangeResult, KbChanges
from shared.store.models_provenance import UndoLabel
from shared.store.mongo.audit import MongoAudit
from shared.store.mongo.chat import MongoFeedback, MongoProposals, MongoUploadMessages
from shared.store.mongo.client import MongoDb, mongo_errors, translate
from shared.store.mongo.content import MongoContent, MongoQuizBanks
from shared.store.mongo.kb import MongoKb, MongoRelations, MongoTopics
from shared.store.mongo.leases import MongoIdempotency, MongoLocks
from shared.store.mongo.migrations import current_version, migrate
from shared.store.mongo.ops import MongoCurriculum, MongoHandbookSync, MongoLlmCalls
from shared.store.mongo.pending import MongoPendingMerges
from shared.store.mongo.provenance import MongoCuration, MongoProvenance
from shared.store.mongo.quiz import MongoQuizAttempts, MongoScores
from shared.store.mongo.records import (
    MongoConversationRefs,
    MongoCurrentSources,
    MongoHandbookTrees,
    MongoHeldChanges,
    MongoKbVersion,
)
from shared.store.mongo.social import MongoSuggestions, MongoThreads
from shared.store.mongo.sources import MongoSources, MongoSourceTexts
from shared.store.mongo.state import MongoCustomTopics, MongoFlags, MongoMergeProgress
from shared.store.mongo.tombstones import MongoTombstones
from shared.store.mongo.turns import MongoTurns
from shared.store.mongo.undo import MongoChangeLog


@mongo_errors
class MongoStore:
    """Store on a MongoDB database."""

    backend = "mongodb"

    def __init__(self, url: str, *, database: str | None = None, timeout_ms: int = 10_000) -> None:
        self.db = MongoDb(url, database=database, timeout_ms=timeout_ms)
        self._kb = MongoKb(self.db)
        self.topics = MongoTopics(self.db, self._kb)
        self.relations = MongoRelations(self.db, self._kb)
        self.sources = MongoSources(self.db)
        self.source_texts = MongoSourceTexts(self.db)
        self.content = MongoContent(self.db)
        self.quiz_banks = MongoQuizBanks(self.db)
        self.quiz_attempts = MongoQuizAttempts(self.db)
        self.scores = MongoScores(self.db)
        self.threads = MongoThreads(self.db)
        self.suggestions = MongoSuggestions(self.db)
        self.llm_calls = MongoLlmCalls(self.db)
        self.handbook_sync = MongoHandbookSync(self.db)
        self.curriculum = MongoCurriculum(self.db)
        self.proposals = MongoProposals(self.db)
        self.turns = MongoTurns(self.db)
        self.feedback = MongoFeedback(self.db)
        self.upload_messages = MongoUploadMessages(self.db)
        self.merge_progress = MongoMergeProgress(self.db)
        self.idempotency = MongoIdempotency(self.db)
        self.custom_topics = MongoCustomTopics(self.db)
        self.flags = MongoFlags(self.db)
        self.locks = MongoLocks(self.db)
        self.provenance = MongoProvenance(self.db)
        self.curation = MongoCuration(self.db)
        self.pending_merges = MongoPendingMerges(self.db)
        self.tombstones = MongoTombstones(self.db)
        self.held_changes = MongoHeldChanges(self.db)
        self.handbook_trees = MongoHandbookTrees(self.db)
        self.kb_version = MongoKbVersion(self.db)
        self.current_sources = MongoCurrentSources(self.db)
        self.conversation_refs = MongoConversationRefs(self.db)
        self.change_log = MongoChangeLog(self.db)
        self.audit = MongoAudit(self.db)

    @classmethod
    async def open(
        cls, url: str, *, database: str | None = None, timeout_ms: int = 10_000
    ) -> MongoStore:
        """Connect, detect transactions, ensure indexes and migrate."""
        store = cls(url, database=database, timeout_ms=timeout_ms)
        try:
            await store.db.connect()
            await migrate(store.db)
        except PyMongoError as exc:
            await store.close()
            raise translate(exc) from None
        except BaseException:
            await store.close()
            raise
        return store

    @property
    def transactions(self) -> bool:
        """Whether multi-document writes run in transactions (replica set or mongos)."""
        return self.db.transactions

    async def apply_kb_changes(
        self, changes: KbChanges, *, chunk: ChunkMark | None = None, undo: UndoLabel | None = None
    ) -> KbChangeResult:
        """Apply a graph change atomically (transaction) or as ordered idempotent writes."""
        return await self._kb.apply(changes, chunk, undo)

    async def schema_version(self) -> int:
        """The migration version the store is at."""
        return await current_version(self.db)

    async def close(self) -> None:
        """Close the client."""
        await self.db.close()

    async def __aenter__(self) -> MongoStore:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
