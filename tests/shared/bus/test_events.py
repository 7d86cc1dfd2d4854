"""Event models and parse_event: every subject round-trips; bad bytes are rejected clearly."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import ValidationError

from shared.bus import (
    EVENT_MODELS,
    REGISTRY,
    ChunkExtracted,
    ContentReady,
    ContentRequested,
    DeadLetter,
    Event,
    KbDeltaApplied,
    KbDeltaDecided,
    KbDeltaProposed,
    KbUpdated,
    LLMCallLogged,
    QuizAnswered,
    QuizReady,
    QuizRequested,
    QuizScored,
    SourceCancelled,
    SourceCompleted,
    SourceFailed,
    SourceProgress,
    SourceUploaded,
    model_for_subject,
    parse_event,
)
from shared.errors import BadInputError
from shared.llm.telemetry import LLMCallRecord

TOPIC = {"id": "t-onboarding", "label": "Onboarding", "type": "process",
         "description": "How new colleagues start", "learning_relevance": "high"}  # fmt: skip
RELATION = {"source": "t-onboarding", "target": "t-buddy", "type": "depends_on"}
DELTA = {"reason": "missing role", "topics": [TOPIC], "relations": [RELATION]}
COUNTS = {"chunks_done": 3, "chunks_total": 4, "topics_added": 5, "topics_updated": 1,
          "relations_added": 6, "relations_dropped": 2}  # fmt: skip
REPLY = {"channel": "D123", "thread_ts": "1700000000.0001"}

# One valid payload (without envelope) per model; a new model without a sample fails below.
SAMPLES: dict[type[Event], dict[str, Any]] = {
    SourceUploaded: {"source_id": "s1", "name": "handbook.md", "sha256": "ab" * 32,
                     "text_ref": "source_texts/s1", "size": 10, "uploaded_by": "U1"},
    SourceCancelled: {"source_id": "s1"},
    SourceProgress: {"source_id": "s1", **COUNTS},
    SourceCompleted: {"source_id": "s1", **COUNTS, "chunks_done": 4, "duration": 12.5},
    SourceFailed: {"source_id": "s1", "error": "boom"},
    ChunkExtracted: {"source_id": "s1", "chunk_index": 0, "chunk_count": 2, "topics": [TOPIC],
                     "relations": [RELATION | {"type": "executes", "description": "legacy"}],
                     "prompt_version": "extract-v3"},
    KbDeltaProposed: {"suggestion_id": "sg1", "delta": DELTA, "proposed_by": "r42"},
    KbDeltaDecided: {"suggestion_id": "sg1", "decision": "approved",
                                           "decided_by": "U9", "delta": DELTA},
    KbDeltaApplied: {"suggestion_id": "sg1", "decision": "approved", "decided_by": "U9",
                     "proposed_by": "U2", "outcome": "applied", "topics": 1},
    KbUpdated: {"kb_hash": "abc", "changed_ids": ["t1"], "reason": "merge"},
    ContentRequested: {"user_id": "U1", "topic_id": "t1", "force": True,
                                            "content_type": "all", "reply_to": REPLY},
    ContentReady: {"topic_id": "t1", "content_type": "slides", "ok": True,
                                        "error": None, "content_ref": "content/t1/slides",
                                        "reply_to": REPLY},
    QuizRequested: {"user_id": "U1", "week": "2026-W48", "reply_to": REPLY},
    QuizReady: {"user_id": "U1", "week": "2026-W48", "attempt_id": "a1",
                                     "ok": True, "error": None,
                                     "question": {"text": "Q?", "choices": ["a", "b"]},
                                     "reply_to": REPLY},
    QuizAnswered: {"attempt_id": "a1", "user_id": "U1",
                                        "question_index": 2, "choice_index": 1, "reply_to": REPLY},
    QuizScored: {"attempt_id": "a1", "user_id": "U1", "week": "2026-W48", "question_index": 2,
                 "question_count": 10, "correct": True, "correct_index": 1,
                 "explanation": "Omdat het zo in het handboek staat.", "reply_to": REPLY},
    LLMCallLogged: {"record": LLMCallRecord(
        task="extract", model="claude-haiku-4-5", tier="fast", duration_ms=812.5, ok=True,
        input_tokens=1200, output_tokens=300, cost_usd=0.0027).model_dump(mode="json")},
    DeadLetter: {"original_subject": "kb.updated", "original_event_id": str(uuid.uuid4()),
                 "error": "PermanentError: nope", "deliveries": 1, "consumer": "r42"},
}  # fmt: skip


def wire(model: type[Event], **overrides: Any) -> dict[str, Any]:
    """A full wire payload (envelope + sample) for `model`."""
    envelope = {"event_id": str(uuid.uuid4()), "occurred_at": "2026-11-29T10:00:00Z",
                "schema_version": 1, "correlation_id": "corr-1", "actor": "tester"}  # fmt: skip
    return envelope | SAMPLES[model] | overrides


def subject_of(model: type[Event]) -> str:
    return "failed.kb.updated" if model is DeadLetter else model.SUBJECT


ALL_MODELS = [*EVENT_MODELS, DeadLetter]


def test_every_registered_subject_has_a_sample_and_a_model() -> None:
    assert set(SAMPLES) == set(ALL_MODELS)
    assert set(REGISTRY) == {m.SUBJECT for m in EVENT_MODELS}
    assert len(REGISTRY) == 17  # the Events table of docs/ARCHITECTURE.md
    assert all(model_for_subject(m.SUBJECT) is m for m in EVENT_MODELS)
    assert model_for_subject("failed.quiz.ready") is DeadLetter
    with pytest.raises(BadInputError):
        model_for_subject("failed.")


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda m: m.__name__)
def test_parse_event_round_trips(model: type[Event]) -> None:
    data = json.dumps(wire(model)).encode()
    event = parse_event(subject_of(model), data)
    assert type(event) is model
    assert event.actor == "tester" and event.correlation_id == "corr-1"
    assert event.occurred_at == datetime(2026, 11, 29, 10, tzinfo=UTC)
    assert parse_event(subject_of(model), event.to_bytes()) == event


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda m: m.__name__)
def test_parse_event_rejects_not_json(model: type[Event]) -> None:
    with pytest.raises(BadInputError, match="not JSON"):
        parse_event(subject_of(model), b"{not json")


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda m: m.__name__)
def test_parse_event_rejects_wrong_schema(model: type[Event]) -> None:
    payload = wire(model)
    required = next(k for k in SAMPLES[model] if model.model_fields[k].is_required())
    del payload[required]
    with pytest.raises(BadInputError, match=rf"does not match {model.__name__}: {required}"):
        parse_event(subject_of(model), json.dumps(payload).encode())
    with pytest.raises(BadInputError, match="surprise: Extra inputs are not permitted"):
        parse_event(subject_of(model), json.dumps(wire(model, surprise=1)).encode())


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda m: m.__name__)
@pytest.mark.parametrize("version", [2, 0, "1", None])
def test_parse_event_rejects_unknown_schema_version(model: type[Event], version: object) -> None:
    payload = wire(model, schema_version=version)
    with pytest.raises(BadInputError, match="schema_version"):
        parse_event(subject_of(model), json.dumps(payload).encode())


def test_parse_event_rejects_unknown_subject_and_non_objects() -> None:
    with pytest.raises(BadInputError, match=r"unknown event subject 'source\.exploded'"):
        parse_event("source.exploded", b"{}")
    with pytest.raises(BadInputError, match="must be a JSON object"):
        parse_event("kb.updated", b"[1, 2]")
    with pytest.raises(BadInputError, match="no schema_version"):
        parse_event("kb.updated", json.dumps({"actor": "x"}).encode())


def test_parse_event_strips_the_namespace() -> None:
    data = json.dumps(wire(QuizRequested)).encode()
    assert isinstance(parse_event("t1.quiz.requested", data, namespace="t1"), QuizRequested)
    with pytest.raises(BadInputError, match="outside bus namespace"):
        parse_event("quiz.requested", data, namespace="t1")


def test_dead_letter_subject_must_match_its_original_subject() -> None:
    data = json.dumps(wire(DeadLetter)).encode()
    with pytest.raises(BadInputError, match="original_subject"):
        parse_event("failed.quiz.ready", data)
    with pytest.raises(BadInputError, match="never dead-lettered"):
        nested = wire(DeadLetter, original_subject="failed.kb.updated")
        parse_event("failed.failed.kb.updated", json.dumps(nested).encode())


def test_vocabularies_are_enforced() -> None:
    legacy = RELATION | {"type": "executes"}
    chunk = parse_event("chunk.extracted", json.dumps(wire(ChunkExtracted)).encode())
    assert isinstance(chunk, ChunkExtracted) and chunk.relations[0].type == "executes"
    # A validated delta uses the normalised vocabulary only.
    bad_delta = wire(KbDeltaProposed, delta=DELTA | {"relations": [legacy]})
    with pytest.raises(BadInputError, match=r"delta\.relations\.0\.type"):
        parse_event("kb.delta.proposed", json.dumps(bad_delta).encode())
    bad_topic = wire(ChunkExtracted, topics=[TOPIC | {"type": "person"}])
    with pytest.raises(BadInputError, match=r"topics\.0\.type"):
        parse_event("chunk.extracted", json.dumps(bad_topic).encode())
    with pytest.raises(BadInputError, match="content_type"):
        video = wire(ContentRequested, content_type="video")
        parse_event("content.requested", json.dumps(video).encode())
    with pytest.raises(BadInputError, match="week"):
        parse_event("quiz.requested", json.dumps(wire(QuizRequested, week="2026-48")).encode())


def test_payload_invariants() -> None:
    with pytest.raises(BadInputError, match="chunks_done"):
        parse_event("source.progress", json.dumps(
            wire(SourceProgress, chunks_done=5, chunks_total=4)).encode())  # fmt: skip
    with pytest.raises(BadInputError, match="chunk_index"):
        parse_event("chunk.extracted", json.dumps(
            wire(ChunkExtracted, chunk_index=2, chunk_count=2)).encode())  # fmt: skip


def test_envelope_defaults_and_checks() -> None:
    event = QuizRequested(actor="gateway", user_id="U1", week="2026-W01")
    assert uuid.UUID(event.event_id).version == 4
    assert event.correlation_id == event.event_id
    assert event.schema_version == 1
    assert event.occurred_at.tzinfo is UTC
    follow = SourceProgress.caused_by(event, actor="extractor", source_id="s", chunks_done=0,
                                      chunks_total=1)  # fmt: skip
    assert follow.correlation_id == event.correlation_id and follow.event_id != event.event_id
    local = datetime(2026, 1, 1, 12, tzinfo=timezone(timedelta(hours=1)))
    shifted = QuizRequested(actor="a", user_id="U", week="2026-W01", occurred_at=local)
    assert shifted.occurred_at == datetime(2026, 1, 1, 11, tzinfo=UTC)
    with pytest.raises(ValidationError, match="timezone"):
        QuizRequested(actor="a", user_id="U", week="2026-W01", occurred_at=datetime(2026, 1, 1))
    with pytest.raises(ValidationError, match="UUID"):
        QuizRequested(actor="a", user_id="U", week="2026-W01", event_id="not-a-uuid")
    with pytest.raises(ValidationError, match="actor"):
        QuizRequested(actor="", user_id="U", week="2026-W01")
    with pytest.raises(ValidationError, match="frozen"):
        event.user_id = "U2"  # type: ignore[misc]
