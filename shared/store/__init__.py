"""The store: domain models, repository protocols, SQLite and MongoDB adapters.

Open one with `await open_store(settings.store_url)`; adapters are imported lazily so
importing this package opens nothing and needs no server.

Resuming extraction: each merged chunk leaves a record keyed by (source_id, chunk_index)
(`source_chunks`), written by `Store.apply_kb_changes(changes, chunk=ChunkMark(...))` in
the same transaction as the chunk's graph changes. A chunk is therefore merged exactly
once, and `sources.first_unmerged_chunk(source_id)` is where a restarted extractor resumes.
The quiz-active flag is the user's active attempt (`quiz_attempts.get_active_attempt`),
which expires after the attempt's idle timeout.

Service state has typed repositories (proposals, turns, feedback, upload_messages,
merge_progress, idempotency, custom_topics, flags, locks, held_changes, handbook_trees,
kb_version, current_sources, conversation_refs); migrations 6, 8 and 9 moved the rows of
the old key/value `settings` table into them, and 9 dropped it.
Provenance: `KbChanges.assertions` records which source chunks assert what in the same
write as the change; `provenance.retract` and `provenance.unasserted` find what no source
asserts; `curation` marks admin-set fields; `apply_kb_changes(..., undo=UndoLabel(...))`
logs a before-image that `undo_changes(batch)` turns back into a change.
Audit: `audit` keeps every admin action and every refused attempt.

Names load on first use (PEP 562): importing one module (`shared.store.models_telemetry`)
must not pull in every model and protocol.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.lazy import lazy_exports

if TYPE_CHECKING:
    from shared.store._common import describe_validation, iso_week, normalise_question_key, utcnow
    from shared.store.factory import open_store, redact_url
    from shared.store.fence import Fence, LeaseLostError
    from shared.store.kb_file import (
        ImportPlan,
        ImportRejectedError,
        KbStats,
        RowProblem,
        export_kb,
        import_kb,
        kb_stats,
        plan_import,
        read_kb_file,
    )
    from shared.store.leases import HeldLease, LockBusyError, hold_lock, renewing
    from shared.store.models import (
        LEARNING_RELEVANCES,
        RELATION_TYPES,
        SOURCE_STATUSES,
        TOPIC_TYPES,
        Assertion,
        ChunkMark,
        HandbookSyncState,
        KbChangeResult,
        KbChanges,
        LearningRelevance,
        Relation,
        RelationKey,
        RelationType,
        Source,
        SourceStatus,
        Suggestion,
        SuggestionStatus,
        Topic,
        TopicCounts,
        TopicMetadata,
        TopicType,
    )
    from shared.store.models_audit import AUDIT_SURFACES, AuditEntry, AuditSurface
    from shared.store.models_learning import (
        CONTENT_KINDS,
        THREAD_MAX_MESSAGES,
        AnswerResult,
        AttemptAnswer,
        CallAggregate,
        Content,
        ContentKind,
        CurriculumEntry,
        Difficulty,
        LeaderboardEntry,
        LlmCall,
        QuizAttempt,
        QuizBank,
        QuizQuestion,
        Score,
        ThreadMessage,
    )
    from shared.store.models_pending import HeldChunk, PendingRelation
    from shared.store.models_provenance import (
        CURATED_FIELDS,
        ChangeBatch,
        CuratedField,
        CurationMark,
        Retraction,
        Unasserted,
        UndoLabel,
        undo_changes,
    )
    from shared.store.models_records import ConversationRef, HandbookTree, HeldChange
    from shared.store.models_state import (
        PROPOSAL_STATUSES,
        TURN_RETENTION,
        ChatProposal,
        ChatTurn,
        CustomTopic,
        DecidedStatus,
        FeedbackRate,
        FeedbackValue,
        FeedbackVote,
        Flag,
        IdempotencyRecord,
        Lease,
        MergeProgress,
        ProposalStatus,
        TurnContent,
        UploadMessage,
    )
    from shared.store.models_telemetry import LLMCallRecord
    from shared.store.models_tombstones import Tombstone
    from shared.store.protocols import (
        ContentRepository,
        CurriculumRepository,
        HandbookSyncRepository,
        LlmCallRepository,
        QuizAttemptRepository,
        QuizBankRepository,
        RelationRepository,
        ScoreRepository,
        SourceRepository,
        SourceTextRepository,
        Store,
        SuggestionRepository,
        ThreadRepository,
        TopicRepository,
    )
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

_EXPORTS: dict[str, tuple[str, ...]] = {
    "shared.store._common": ("describe_validation", "iso_week", "normalise_question_key", "utcnow"),
    "shared.store.factory": ("open_store", "redact_url"),
    "shared.store.fence": ("Fence", "LeaseLostError"),
    "shared.store.kb_file": (
        "ImportPlan", "ImportRejectedError", "KbStats", "RowProblem", "export_kb", "import_kb",
        "kb_stats", "plan_import", "read_kb_file",
    ),
    "shared.store.leases": ("HeldLease", "LockBusyError", "hold_lock", "renewing"),
    "shared.store.models": (
        "LEARNING_RELEVANCES", "RELATION_TYPES", "SOURCE_STATUSES", "TOPIC_TYPES", "Assertion",
        "ChunkMark", "HandbookSyncState", "KbChangeResult", "KbChanges", "LearningRelevance",
        "Relation", "RelationKey", "RelationType", "Source", "SourceStatus", "Suggestion",
        "SuggestionStatus", "Topic", "TopicCounts", "TopicMetadata", "TopicType",
    ),
    "shared.store.models_audit": ("AUDIT_SURFACES", "AuditEntry", "AuditSurface"),
    "shared.store.models_learning": (
        "CONTENT_KINDS", "THREAD_MAX_MESSAGES", "AnswerResult", "AttemptAnswer", "CallAggregate",
        "Content", "ContentKind", "CurriculumEntry", "Difficulty", "LeaderboardEntry", "LlmCall",
        "QuizAttempt", "QuizBank", "QuizQuestion", "Score", "ThreadMessage",
    ),
    "shared.store.models_pending": ("HeldChunk", "PendingRelation"),
    "shared.store.models_provenance": (
        "CURATED_FIELDS", "ChangeBatch", "CuratedField", "CurationMark", "Retraction", "Unasserted",
        "UndoLabel", "undo_changes",
    ),
    "shared.store.models_records": ("ConversationRef", "HandbookTree", "HeldChange"),
    "shared.store.models_state": (
        "PROPOSAL_STATUSES", "TURN_RETENTION", "ChatProposal", "ChatTurn", "CustomTopic",
        "DecidedStatus", "FeedbackRate", "FeedbackValue", "FeedbackVote", "Flag",
        "IdempotencyRecord", "Lease", "MergeProgress", "ProposalStatus", "TurnContent",
        "UploadMessage",
    ),
    "shared.store.models_telemetry": ("LLMCallRecord",),
    "shared.store.models_tombstones": ("Tombstone",),
    "shared.store.protocols": (
        "ContentRepository", "CurriculumRepository", "HandbookSyncRepository", "LlmCallRepository",
        "QuizAttemptRepository", "QuizBankRepository", "RelationRepository", "ScoreRepository",
        "SourceRepository", "SourceTextRepository", "Store", "SuggestionRepository",
        "ThreadRepository", "TopicRepository",
    ),
    "shared.store.protocols_audit": ("AuditRepository",),
    "shared.store.protocols_pending": ("PendingMergeRepository",),
    "shared.store.protocols_provenance": (
        "ChangeLogRepository", "CurationRepository", "ProvenanceRepository",
    ),
    "shared.store.protocols_records": (
        "ConversationRefRepository", "CurrentSourceRepository", "HandbookTreeRepository",
        "HeldChangeRepository", "KbVersionRepository",
    ),
    "shared.store.protocols_state": (
        "CustomTopicRepository", "FeedbackRepository", "FlagRepository", "IdempotencyRepository",
        "LockRepository", "MergeProgressRepository", "ProposalRepository", "TurnRepository",
        "UploadMessageRepository",
    ),
    "shared.store.protocols_tombstones": ("TombstoneRepository",),
}  # fmt: skip
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "AUDIT_SURFACES",
    "CONTENT_KINDS",
    "CURATED_FIELDS",
    "LEARNING_RELEVANCES",
    "PROPOSAL_STATUSES",
    "RELATION_TYPES",
    "SOURCE_STATUSES",
    "THREAD_MAX_MESSAGES",
    "TOPIC_TYPES",
    "TURN_RETENTION",
    "AnswerResult",
    "Assertion",
    "AttemptAnswer",
    "AuditEntry",
    "AuditRepository",
    "AuditSurface",
    "CallAggregate",
    "ChangeBatch",
    "ChangeLogRepository",
    "ChatProposal",
    "ChatTurn",
    "ChunkMark",
    "Content",
    "ContentKind",
    "ContentRepository",
    "ConversationRef",
    "ConversationRefRepository",
    "CuratedField",
    "CurationMark",
    "CurationRepository",
    "CurrentSourceRepository",
    "CurriculumEntry",
    "CurriculumRepository",
    "CustomTopic",
    "CustomTopicRepository",
    "DecidedStatus",
    "Difficulty",
    "FeedbackRate",
    "FeedbackRepository",
    "FeedbackValue",
    "FeedbackVote",
    "Fence",
    "Flag",
    "FlagRepository",
    "HandbookSyncRepository",
    "HandbookSyncState",
    "HandbookTree",
    "HandbookTreeRepository",
    "HeldChange",
    "HeldChangeRepository",
    "HeldChunk",
    "HeldLease",
    "IdempotencyRecord",
    "IdempotencyRepository",
    "ImportPlan",
    "ImportRejectedError",
    "KbChangeResult",
    "KbChanges",
    "KbStats",
    "KbVersionRepository",
    "LLMCallRecord",
    "LeaderboardEntry",
    "LearningRelevance",
    "Lease",
    "LeaseLostError",
    "LlmCall",
    "LlmCallRepository",
    "LockBusyError",
    "LockRepository",
    "MergeProgress",
    "MergeProgressRepository",
    "PendingMergeRepository",
    "PendingRelation",
    "ProposalRepository",
    "ProposalStatus",
    "ProvenanceRepository",
    "QuizAttempt",
    "QuizAttemptRepository",
    "QuizBank",
    "QuizBankRepository",
    "QuizQuestion",
    "Relation",
    "RelationKey",
    "RelationRepository",
    "RelationType",
    "Retraction",
    "RowProblem",
    "Score",
    "ScoreRepository",
    "Source",
    "SourceRepository",
    "SourceStatus",
    "SourceTextRepository",
    "Store",
    "Suggestion",
    "SuggestionRepository",
    "SuggestionStatus",
    "ThreadMessage",
    "ThreadRepository",
    "Tombstone",
    "TombstoneRepository",
    "Topic",
    "TopicCounts",
    "TopicMetadata",
    "TopicRepository",
    "TopicType",
    "TurnContent",
    "TurnRepository",
    "Unasserted",
    "UndoLabel",
    "UploadMessage",
    "UploadMessageRepository",
    "describe_validation",
    "export_kb",
    "hold_lock",
    "import_kb",
    "iso_week",
    "kb_stats",
    "normalise_question_key",
    "open_store",
    "plan_import",
    "read_kb_file",
    "redact_url",
    "renewing",
    "undo_changes",
    "utcnow",
]


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
