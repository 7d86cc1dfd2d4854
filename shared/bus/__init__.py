"""The event bus: event contracts, JetStream streams, the broker, consumers, request/reply.

Subjects, streams and who produces or consumes what: docs/ARCHITECTURE.md (Events) and
docs/asyncapi.yaml (`make docs`). Every rejected event goes to `failed.<original subject>`
(stream FAILED) with the reason and the original event id; a service may add its own domain
event through its subscription's `on_failure` hook (the extractor's `source.failed`).

Names load on first use (PEP 562): `r42 up` needs the stream and subject tables but not
FastStream, and every `shared.bus.<module>` import runs this file first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.lazy import lazy_exports

if TYPE_CHECKING:
    from shared.bus.auth import NatsAuth
    from shared.bus.barrier import subscriptions_settled
    from shared.bus.broker import (
        build_broker,
        is_connected,
        jetstream,
        publish_event,
        reconnect_delay,
    )
    from shared.bus.chat import (
        CHAT_SUBJECT,
        CLEAR_SUBJECT,
        MAX_MESSAGE_CHARS,
        PROPOSAL_SUBJECT,
        ChatReply,
        ChatRequest,
        ClearReply,
        ClearRequest,
        Proposal,
        ProposalDecisionReply,
        ProposalDecisionRequest,
        SourceRef,
        ThreadNote,
    )
    from shared.bus.consumer import (
        Delivery,
        current_delivery,
        declared_consumers,
        failure_event,
        nack_backoff,
        subscribe_event,
    )
    from shared.bus.envelope import Event, Payload, derived_event_id, new_event_id
    from shared.bus.events import (
        EVENT_MODELS,
        ChunkExtracted,
        ContentReady,
        ContentRequested,
        ContentType,
        DeadLetter,
        Decision,
        ExtractedRelation,
        ExtractedRelationType,
        KbDelta,
        KbDeltaApplied,
        KbDeltaDecided,
        KbDeltaProposed,
        KbUpdated,
        LLMCallLogged,
        QuizAnswered,
        QuizReady,
        QuizRequested,
        QuizScored,
        Relation,
        RelationType,
        SourceCancelled,
        SourceCompleted,
        SourceFailed,
        SourceProgress,
        SourceUploaded,
        Topic,
        TopicType,
    )
    from shared.bus.lifecycle import ensure_consumers, start_broker
    from shared.bus.registry import REGISTRY, model_for_subject, parse_event
    from shared.bus.rpc import (
        ERROR_HEADER,
        NoResponderError,
        RpcServer,
        RpcTimeoutError,
        check_rpc_subject,
        request,
        serve_rpc,
    )
    from shared.bus.rpc_chunks import MAX_CHUNKS, ChunkSink, chunk_sink
    from shared.bus.rpc_stream import request_stream
    from shared.bus.streams import (
        DUPLICATE_WINDOW_S,
        STREAMS,
        StreamSpec,
        ensure_streams,
        stream_for_subject,
    )
    from shared.bus.subjects import (
        FAILED_PREFIX,
        RPC_PREFIX,
        check_stream_subject,
        ns_stream,
        ns_subject,
        strip_namespace,
        subjects_overlap,
    )
    from shared.bus.telemetry import BusTelemetrySink
    from shared.config import redact_url

_EXPORTS: dict[str, tuple[str, ...]] = {
    "shared.bus.barrier": ("subscriptions_settled",),
    "shared.bus.auth": ("NatsAuth",),
    "shared.bus.broker": (
        "build_broker", "is_connected", "jetstream", "publish_event", "reconnect_delay",
    ),
    "shared.bus.chat": (
        "CHAT_SUBJECT", "CLEAR_SUBJECT", "MAX_MESSAGE_CHARS", "PROPOSAL_SUBJECT", "ChatReply",
        "ChatRequest", "ClearReply", "ClearRequest", "Proposal", "ProposalDecisionReply",
        "ProposalDecisionRequest", "SourceRef", "ThreadNote",
    ),
    "shared.bus.consumer": (
        "Delivery", "current_delivery", "declared_consumers", "failure_event", "nack_backoff",
        "subscribe_event",
    ),
    "shared.bus.envelope": ("Event", "Payload", "derived_event_id", "new_event_id"),
    "shared.bus.events": (
        "EVENT_MODELS", "ChunkExtracted", "ContentReady", "ContentRequested", "ContentType",
        "DeadLetter", "Decision", "ExtractedRelation", "ExtractedRelationType", "KbDelta",
        "KbDeltaApplied", "KbDeltaDecided", "KbDeltaProposed", "KbUpdated", "LLMCallLogged",
        "QuizAnswered", "QuizReady", "QuizRequested", "QuizScored", "Relation", "RelationType",
        "SourceCancelled", "SourceCompleted", "SourceFailed", "SourceProgress", "SourceUploaded",
        "Topic", "TopicType",
    ),
    "shared.bus.lifecycle": ("ensure_consumers", "start_broker"),
    "shared.bus.registry": ("REGISTRY", "model_for_subject", "parse_event"),
    "shared.bus.rpc": (
        "ERROR_HEADER", "NoResponderError", "RpcServer", "RpcTimeoutError", "check_rpc_subject",
        "request", "serve_rpc",
    ),
    "shared.bus.rpc_chunks": ("MAX_CHUNKS", "ChunkSink", "chunk_sink"),
    "shared.bus.rpc_stream": ("request_stream",),
    "shared.bus.streams": (
        "DUPLICATE_WINDOW_S", "STREAMS", "StreamSpec", "ensure_streams", "stream_for_subject",
    ),
    "shared.bus.subjects": (
        "FAILED_PREFIX", "RPC_PREFIX", "check_stream_subject", "ns_stream", "ns_subject",
        "strip_namespace", "subjects_overlap",
    ),
    "shared.bus.telemetry": ("BusTelemetrySink",),
    "shared.config": ("redact_url",),
}  # fmt: skip
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "CHAT_SUBJECT",
    "CLEAR_SUBJECT",
    "DUPLICATE_WINDOW_S",
    "ERROR_HEADER",
    "EVENT_MODELS",
    "FAILED_PREFIX",
    "MAX_CHUNKS",
    "MAX_MESSAGE_CHARS",
    "PROPOSAL_SUBJECT",
    "REGISTRY",
    "RPC_PREFIX",
    "STREAMS",
    "BusTelemetrySink",
    "ChatReply",
    "ChatRequest",
    "ChunkExtracted",
    "ChunkSink",
    "ClearReply",
    "ClearRequest",
    "ContentReady",
    "ContentRequested",
    "ContentType",
    "DeadLetter",
    "Decision",
    "Delivery",
    "Event",
    "ExtractedRelation",
    "ExtractedRelationType",
    "KbDelta",
    "KbDeltaApplied",
    "KbDeltaDecided",
    "KbDeltaProposed",
    "KbUpdated",
    "LLMCallLogged",
    "NatsAuth",
    "NoResponderError",
    "Payload",
    "Proposal",
    "ProposalDecisionReply",
    "ProposalDecisionRequest",
    "QuizAnswered",
    "QuizReady",
    "QuizRequested",
    "QuizScored",
    "Relation",
    "RelationType",
    "RpcServer",
    "RpcTimeoutError",
    "SourceCancelled",
    "SourceCompleted",
    "SourceFailed",
    "SourceProgress",
    "SourceRef",
    "SourceUploaded",
    "StreamSpec",
    "ThreadNote",
    "Topic",
    "TopicType",
    "build_broker",
    "check_rpc_subject",
    "check_stream_subject",
    "chunk_sink",
    "current_delivery",
    "declared_consumers",
    "derived_event_id",
    "ensure_consumers",
    "ensure_streams",
    "failure_event",
    "is_connected",
    "jetstream",
    "model_for_subject",
    "nack_backoff",
    "new_event_id",
    "ns_stream",
    "ns_subject",
    "parse_event",
    "publish_event",
    "reconnect_delay",
    "redact_url",
    "request",
    "request_stream",
    "serve_rpc",
    "start_broker",
    "stream_for_subject",
    "strip_namespace",
    "subjects_overlap",
    "subscribe_event",
    "subscriptions_settled",
]


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
