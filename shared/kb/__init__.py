"""Knowledge-base logic (pure: callers pass data in): chunking, retrieval, context, graph.

Names load on first use (PEP 562): a service that needs only the weekly pick or the delta
rules does not pay for the retrieval index (numpy, the stemmer) at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.lazy import lazy_exports

if TYPE_CHECKING:
    from shared.kb.analysis import detect_language
    from shared.kb.context import (
        DEFAULT_MAX_CONTEXT_TOKENS,
        KbContext,
        RelationIndex,
        build_kb_catalogue,
        build_kb_context,
        estimate_tokens,
    )
    from shared.kb.graph import (
        MAX_DELTA_RELATIONS,
        MAX_DELTA_TOPICS,
        DeltaRelation,
        DeltaTopic,
        GraphDelta,
        validate_delta,
    )
    from shared.kb.markdown import topics_from_markdown
    from shared.kb.merge import MergePlan, plan_merge
    from shared.kb.models import (
        LEGACY_RELATION_TYPES,
        RELATION_TYPES,
        RELEVANCE_LEVELS,
        TOPIC_TYPES,
        KbInputError,
        KbRelation,
        KbTopic,
        RelationLike,
        RelationType,
        Relevance,
        TopicLike,
        TopicType,
        fold_text,
        is_kebab_id,
        kb_hash,
        match_label,
        normalise_relation,
        to_kebab_id,
    )
    from shared.kb.retrieval import Hit, IndexCache, RetrievalIndex, is_relevant
    from shared.kb.text import (
        KNOWN_IDS_INSTRUCTION,
        KNOWN_IDS_LIMIT,
        MAX_CHUNK_CHARS,
        OVERLAP_CHARS,
        build_known_ids_hint,
        chunk_spans,
        chunk_text,
    )
    from shared.kb.tokens import STOPWORDS, tokenize
    from shared.kb.weekly import RELEVANCE_WEIGHTS, iso_week, weekly_topic

_EXPORTS: dict[str, tuple[str, ...]] = {
    "shared.kb.analysis": ("detect_language",),
    "shared.kb.context": (
        "DEFAULT_MAX_CONTEXT_TOKENS",
        "KbContext",
        "RelationIndex",
        "build_kb_catalogue",
        "build_kb_context",
        "estimate_tokens",
    ),
    "shared.kb.graph": (
        "MAX_DELTA_RELATIONS",
        "MAX_DELTA_TOPICS",
        "DeltaRelation",
        "DeltaTopic",
        "GraphDelta",
        "validate_delta",
    ),
    "shared.kb.markdown": ("topics_from_markdown",),
    "shared.kb.merge": (
        "MergePlan",
        "plan_merge",
    ),
    "shared.kb.models": (
        "LEGACY_RELATION_TYPES",
        "RELATION_TYPES",
        "RELEVANCE_LEVELS",
        "TOPIC_TYPES",
        "KbInputError",
        "KbRelation",
        "KbTopic",
        "RelationLike",
        "RelationType",
        "Relevance",
        "TopicLike",
        "TopicType",
        "fold_text",
        "match_label",
        "is_kebab_id",
        "kb_hash",
        "normalise_relation",
        "to_kebab_id",
    ),
    "shared.kb.retrieval": (
        "Hit",
        "IndexCache",
        "RetrievalIndex",
        "is_relevant",
    ),
    "shared.kb.text": (
        "KNOWN_IDS_INSTRUCTION",
        "KNOWN_IDS_LIMIT",
        "MAX_CHUNK_CHARS",
        "OVERLAP_CHARS",
        "build_known_ids_hint",
        "chunk_spans",
        "chunk_text",
    ),
    "shared.kb.tokens": (
        "STOPWORDS",
        "tokenize",
    ),
    "shared.kb.weekly": (
        "RELEVANCE_WEIGHTS",
        "iso_week",
        "weekly_topic",
    ),
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "DEFAULT_MAX_CONTEXT_TOKENS",
    "KNOWN_IDS_INSTRUCTION",
    "KNOWN_IDS_LIMIT",
    "LEGACY_RELATION_TYPES",
    "MAX_CHUNK_CHARS",
    "MAX_DELTA_RELATIONS",
    "MAX_DELTA_TOPICS",
    "OVERLAP_CHARS",
    "RELATION_TYPES",
    "RELEVANCE_LEVELS",
    "RELEVANCE_WEIGHTS",
    "STOPWORDS",
    "TOPIC_TYPES",
    "DeltaRelation",
    "DeltaTopic",
    "GraphDelta",
    "Hit",
    "IndexCache",
    "KbContext",
    "KbInputError",
    "KbRelation",
    "KbTopic",
    "MergePlan",
    "RelationIndex",
    "RelationLike",
    "RelationType",
    "Relevance",
    "RetrievalIndex",
    "TopicLike",
    "TopicType",
    "build_kb_catalogue",
    "build_kb_context",
    "build_known_ids_hint",
    "chunk_spans",
    "chunk_text",
    "detect_language",
    "estimate_tokens",
    "fold_text",
    "is_kebab_id",
    "is_relevant",
    "iso_week",
    "kb_hash",
    "match_label",
    "normalise_relation",
    "plan_merge",
    "to_kebab_id",
    "tokenize",
    "topics_from_markdown",
    "validate_delta",
    "weekly_topic",
]


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
