"""Repository protocols: what every store adapter (SQLite, MongoDB) provides."""

from __future__ import annotations

import builtins
from collections.abc import Collection, Iterable
from datetime import datetime
from typing import Any, Literal, Protocol

from shared.store.fence import Fence
from shared.store.models import (
    ChunkMark,
    HandbookSyncState,
    KbChangeResult,
    KbChanges,
    Relation,
    RelationKey,
    Source,
    SourceStatus,
    Suggestion,
    SuggestionStatus,
    Topic,
    TopicCounts,
)
from shared.store.models_learning import (
    AnswerResult,
    AttemptStatus,
    CallAggregate,
    Content,
    ContentKind,
    CurriculumEntry,
    LeaderboardEntry,
    LlmCall,
    QuizAttempt,
    QuizBank,
    QuizQuestion,
    Score,
    ThreadMessage,
)
from shared.store.models_provenance import UndoLabel
from shared.store.models_telemetry import LLMCallRecord
from shared.store.paging import PAGE
from shared.store.protocols_audit import AuditRepository
from shared.store.protocols_pending import PendingMergeRepository
from shared.store.protocols_provenance import (
    ChangeLogRepository,
    CurationRepository,
    ProvenanceRepository,
)
from shared.store.protocols_records import (
    ConversationRefRepository,
    CurrentSourceRepository,
    HandbookTreeRepository,
    HeldChangeRepository,
    KbVersionRepository,
)
from shared.store.protocols_state import (
    CustomTopicRepository,
    FeedbackRepository,
    FlagRepository,
    IdempotencyRepository,
    LockRepository,
    MergeProgressRepository,
    ProposalRepository,
    TurnRepository,
    UploadMessageRepository,
)
from shared.store.protocols_tombstones import TombstoneRepository


class TopicRepository(Protocol):
    """Topics. Upserts keep created_at; a locked relevance survives unlocked upserts."""

    async def get(self, topic_id: str) -> Topic | None:
        """One topic or None."""

    async def get_many(self, topic_ids: Iterable[str]) -> list[Topic]:
        """The topics that exist among the ids, in id order."""

    async def list(self, *, type: str | None = None, relevance: str | None = None) -> list[Topic]:
        """All topics (optionally filtered), in id order."""

    async def page(self, *, after_id: str | None = None, limit: int = PAGE) -> builtins.list[Topic]:
        """Up to `limit` topics with ids after `after_id` (from the first), in id order.

        Keyset paging: each page is its own short read, so pages taken while the graph
        changes see each topic as it is when its page is read (BadInputError on a bad limit).
        """

    async def ids(self) -> set[str]:
        """Every topic id."""

    async def recent_ids(self, limit: int = 200) -> builtins.list[str]:
        """The ids of the most recently updated topics, newest first."""

    async def upsert_many(self, topics: Iterable[Topic]) -> int:
        """Insert or update topics in one transaction; returns how many were given."""

    async def set_relevance(self, topic_id: str, relevance: str, *, lock: bool = True) -> Topic:
        """Set a topic's learning relevance (an admin decision locks it by default)."""

    async def delete_many(self, topic_ids: Iterable[str]) -> int:
        """Delete topics and every relation touching them; returns topics deleted."""

    async def counts(self) -> TopicCounts:
        """Totals by type and by learning relevance."""


class RelationRepository(Protocol):
    """Relations, unique per (source, target, type); endpoints must exist."""

    async def list(self, *, topic_id: str | None = None, type: str | None = None) -> list[Relation]:
        """All relations (or those touching a topic / of a type), ordered by key."""

    async def touching(self, topic_ids: Iterable[str]) -> builtins.list[Relation]:
        """The relations with either endpoint among the ids, ordered by key."""

    async def page(
        self, *, after: RelationKey | None = None, limit: int = PAGE
    ) -> builtins.list[Relation]:
        """Up to `limit` relations with keys after `after` (from the first), ordered by key."""

    async def upsert_many(self, relations: Iterable[Relation]) -> int:
        """Insert or update relations in one transaction (BadInputError on a missing endpoint)."""

    async def delete_many(self, keys: Iterable[RelationKey]) -> int:
        """Delete relations by key; returns how many existed."""

    async def count_by_type(self) -> dict[str, int]:
        """Relation totals per type."""


class SourceRepository(Protocol):
    """Sources under extraction and the per-chunk merge record used to resume."""

    async def create(self, source: Source) -> Source:
        """Insert a source; creating an existing id returns the stored one unchanged."""

    async def get(self, source_id: str) -> Source | None:
        """One source or None."""

    async def find_by_sha256(self, sha256: str) -> list[Source]:
        """Sources with this content hash, newest first."""

    async def list(self, *, status: SourceStatus | None = None, limit: int = 100) -> list[Source]:
        """Sources, newest first."""

    async def set_status(
        self,
        source_id: str,
        status: SourceStatus,
        *,
        error: str | None = None,
        only_from: Collection[SourceStatus] | None = None,
    ) -> Source | None:
        """Move a source to a status; with only_from it is a compare-and-set (None if refused)."""

    async def set_chunks_total(self, source_id: str, total: int) -> Source:
        """Record how many chunks the source was split into."""

    async def merged_chunks(self, source_id: str) -> set[int]:
        """Indexes of the chunks whose KB changes have been applied."""

    async def first_unmerged_chunk(self, source_id: str) -> int:
        """Where a restarted extractor resumes: the lowest chunk index not yet merged."""

    async def delete(self, source_id: str) -> bool:
        """Delete a source, its text and its chunk record."""

    async def count_by_status(self) -> dict[str, int]:
        """Source totals per status."""


class SourceTextRepository(Protocol):
    """The extracted plain text of each source."""

    async def put(self, source_id: str, text: str) -> None:
        """Store (or replace) a source's text."""

    async def get(self, source_id: str) -> str | None:
        """A source's text or None."""

    async def delete(self, source_id: str) -> bool:
        """Delete a source's text."""


class ContentRepository(Protocol):
    """Generated article, slides and infographic per topic."""

    async def get(self, topic_id: str) -> Content | None:
        """A topic's content or None."""

    async def get_many(self, topic_ids: Iterable[str]) -> builtins.list[Content]:
        """The content of these topics that exists, in topic id order (one query)."""

    async def list(self) -> list[Content]:
        """Every topic's content, ordered by topic id (one read for indexing)."""

    async def put(self, content: Content) -> None:
        """Replace a topic's content."""

    async def set_part(
        self,
        topic_id: str,
        kind: ContentKind,
        value: dict[str, Any],
        *,
        prompt_version: str | None,
        topic_fingerprint: str | None,
        fence: Fence | None = None,
    ) -> Content:
        """Atomically set one part (clears stale, stamps generated_at).

        With a fence the part is written only while the fence's owner holds its lease
        (LeaseLostError otherwise, nothing written).
        """

    async def mark_stale(self, topic_ids: Iterable[str]) -> int:
        """Flag content of changed topics as stale; returns how many rows changed."""

    async def list_stale(self) -> builtins.list[str]:
        """Topic ids whose content is stale."""

    async def delete(self, topic_id: str) -> bool:
        """Delete a topic's content."""


class QuizBankRepository(Protocol):
    """Question banks per topic, deduplicated by normalised key."""

    async def get(self, topic_id: str) -> QuizBank | None:
        """A topic's bank or None."""

    async def add_questions(
        self, topic_id: str, questions: Iterable[QuizQuestion]
    ) -> list[QuizQuestion]:
        """Append questions whose key is new to the bank; returns those added."""

    async def remove_question(self, topic_id: str, key: str) -> bool:
        """Remove one question by key."""

    async def delete(self, topic_id: str) -> bool:
        """Delete a topic's bank."""


class QuizAttemptRepository(Protocol):
    """Quiz attempts; at most one active per user; each question scores at most once."""

    async def start(self, attempt: QuizAttempt, *, now: datetime | None = None) -> QuizAttempt:
        """The user's active attempt: the given one if none was active, else the existing one."""

    async def get(self, attempt_id: str) -> QuizAttempt | None:
        """One attempt or None."""

    async def get_active_attempt(
        self, user: str, *, now: datetime | None = None
    ) -> QuizAttempt | None:
        """The user's active, not idle-expired attempt (the quiz-active flag)."""

    async def record_answer(
        self,
        attempt_id: str,
        question_index: int,
        choice: int,
        *,
        correct: bool,
        points: int,
        now: datetime | None = None,
    ) -> AnswerResult:
        """Record an answer once, add its points to the week's score, finish when complete."""

    async def finish(
        self, attempt_id: str, *, status: AttemptStatus = "finished", now: datetime | None = None
    ) -> bool:
        """End an active attempt (compare-and-set from active)."""

    async def expire_idle(self, *, now: datetime | None = None) -> list[str]:
        """Mark active attempts past their idle expiry as expired; returns their ids."""

    async def list_for_user(self, user: str, *, week: str | None = None) -> list[QuizAttempt]:
        """A user's attempts, newest first."""


class ScoreRepository(Protocol):
    """Points per user per ISO week."""

    async def add_points(self, user: str, week: str, points: int) -> Score:
        """Add points to a user's week (creating the row)."""

    async def get(self, user: str, week: str) -> Score | None:
        """A user's score in a week."""

    async def leaderboard(
        self, *, week: str | None = None, limit: int = 10
    ) -> list[LeaderboardEntry]:
        """Top users for a week (or all time when week is None), points desc then user."""


class ThreadRepository(Protocol):
    """Per-user chat history, capped at THREAD_MAX_MESSAGES (oldest dropped)."""

    async def append(self, user: str, messages: Iterable[ThreadMessage]) -> None:
        """Append messages, keeping only the newest 50."""

    async def get(self, user: str) -> list[ThreadMessage]:
        """A user's messages, oldest first."""

    async def clear(self, user: str) -> int:
        """Forget a user's history; returns messages removed."""


class SuggestionRepository(Protocol):
    """Proposed graph deltas and their decisions."""

    async def create(self, suggestion: Suggestion) -> Suggestion:
        """Store a pending suggestion (an existing id returns the stored one)."""

    async def get(self, suggestion_id: str) -> Suggestion | None:
        """One suggestion or None."""

    async def list(
        self, *, status: SuggestionStatus | None = None, limit: int = 100
    ) -> list[Suggestion]:
        """Suggestions, newest first."""

    async def decide(
        self, suggestion_id: str, *, approve: bool, by: str, now: datetime | None = None
    ) -> Suggestion | None:
        """Compare-and-set from pending; None when it had already been decided."""


class LlmCallRepository(Protocol):
    """LLM call telemetry."""

    async def add(self, record: LLMCallRecord, *, call_id: str | None = None) -> str:
        """Store a record; idempotent by call_id (a new id is made when none is given)."""

    async def last(self, n: int = 20) -> list[LlmCall]:
        """The newest n calls, newest first."""

    async def aggregate(
        self, *, by: Literal["task", "model"], since: datetime | None = None
    ) -> list[CallAggregate]:
        """Totals per task or per model, highest cost first."""

    async def count(self) -> int:
        """How many calls are stored."""


class HandbookSyncRepository(Protocol):
    """Blob shas of handbook files already ingested."""

    async def get(self, path: str) -> HandbookSyncState | None:
        """The state of one path."""

    async def put(self, path: str, sha: str) -> None:
        """Record the sha ingested for a path."""

    async def all(self) -> dict[str, str]:
        """path -> sha for every path."""

    async def delete(self, path: str) -> bool:
        """Forget a path."""


class CurriculumRepository(Protocol):
    """Which topic is taught in which ISO week."""

    async def set(self, week: str, topic_id: str) -> None:
        """Schedule a topic for a week (replacing any previous one)."""

    async def get(self, week: str) -> str | None:
        """The topic of a week."""

    async def all(self) -> list[CurriculumEntry]:
        """The whole schedule, by week."""

    async def delete(self, week: str) -> bool:
        """Unschedule a week."""


class Store(Protocol):
    """One store: the repositories of every collection plus the atomic graph write."""

    @property
    def backend(self) -> str:
        """Which adapter this is: sqlite or mongodb."""

    @property
    def topics(self) -> TopicRepository:
        """The topics repository."""

    @property
    def relations(self) -> RelationRepository:
        """The relations repository."""

    @property
    def sources(self) -> SourceRepository:
        """The sources repository."""

    @property
    def source_texts(self) -> SourceTextRepository:
        """The source texts repository."""

    @property
    def content(self) -> ContentRepository:
        """The content repository."""

    @property
    def quiz_banks(self) -> QuizBankRepository:
        """The quiz banks repository."""

    @property
    def quiz_attempts(self) -> QuizAttemptRepository:
        """The quiz attempts repository."""

    @property
    def scores(self) -> ScoreRepository:
        """The scores repository."""

    @property
    def threads(self) -> ThreadRepository:
        """The threads repository."""

    @property
    def suggestions(self) -> SuggestionRepository:
        """The suggestions repository."""

    @property
    def llm_calls(self) -> LlmCallRepository:
        """The llm calls repository."""

    @property
    def handbook_sync(self) -> HandbookSyncRepository:
        """The handbook sync repository."""

    @property
    def curriculum(self) -> CurriculumRepository:
        """The curriculum repository."""

    @property
    def proposals(self) -> ProposalRepository:
        """Graph deltas proposed in chat."""

    @property
    def turns(self) -> TurnRepository:
        """What each recent answer was made of (the votes copy it)."""

    @property
    def feedback(self) -> FeedbackRepository:
        """Votes on answers."""

    @property
    def upload_messages(self) -> UploadMessageRepository:
        """Progress messages of chat uploads."""

    @property
    def merge_progress(self) -> MergeProgressRepository:
        """Running merge counts per source."""

    @property
    def idempotency(self) -> IdempotencyRepository:
        """Keys of handled requests."""

    @property
    def custom_topics(self) -> CustomTopicRepository:
        """Requested learning topics outside the graph."""

    @property
    def flags(self) -> FlagRepository:
        """Named markers."""

    @property
    def locks(self) -> LockRepository:
        """Named leases."""

    @property
    def provenance(self) -> ProvenanceRepository:
        """Which source chunks assert each topic and relation."""

    @property
    def curation(self) -> CurationRepository:
        """Topic fields set by admins."""

    @property
    def change_log(self) -> ChangeLogRepository:
        """Before-images of logged graph changes."""

    @property
    def held_changes(self) -> HeldChangeRepository:
        """Extractions held for review."""

    @property
    def handbook_trees(self) -> HandbookTreeRepository:
        """Cached handbook folder listings."""

    @property
    def kb_version(self) -> KbVersionRepository:
        """The graph's chained version hash."""

    @property
    def current_sources(self) -> CurrentSourceRepository:
        """The current source of each document name."""

    @property
    def conversation_refs(self) -> ConversationRefRepository:
        """Where surfaces post proactive messages."""

    @property
    def audit(self) -> AuditRepository:
        """Admin actions and refused attempts."""

    @property
    def pending_merges(self) -> PendingMergeRepository:
        """Chunk results and relations waiting to be merged."""

    @property
    def tombstones(self) -> TombstoneRepository:
        """Topics an admin deleted (extraction does not bring them back)."""

    async def apply_kb_changes(
        self, changes: KbChanges, *, chunk: ChunkMark | None = None, undo: UndoLabel | None = None
    ) -> KbChangeResult:
        """Apply a graph change atomically; with a chunk, record it merged (once only).

        With undo, the before-image of everything the change touches is logged under
        undo.batch_id in the same transaction (a batch id already logged applies nothing).
        """

    async def schema_version(self) -> int:
        """The migration version the store is at."""

    async def close(self) -> None:
        """Release connections and threads."""
