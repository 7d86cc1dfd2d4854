"""Subject → model registry and `parse_event`, the one way bytes off the bus become events."""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from shared.bus.envelope import Event
from shared.bus.events import EVENT_MODELS, DeadLetter
from shared.bus.subjects import FAILED_PREFIX, strip_namespace
from shared.errors import BadInputError
from shared.validation import describe_validation

REGISTRY: MappingProxyType[str, type[Event]] = MappingProxyType(
    {model.SUBJECT: model for model in EVENT_MODELS}
)
"""Every fixed subject and its model; `failed.<subject>` maps to DeadLetter."""


def model_for_subject(subject: str) -> type[Event]:
    """The model of a logical subject; raise BadInputError for an unknown subject."""
    if subject in REGISTRY:
        return REGISTRY[subject]
    if subject.startswith(FAILED_PREFIX) and len(subject) > len(FAILED_PREFIX):
        return DeadLetter
    raise BadInputError(f"unknown event subject {subject!r}; known: {', '.join(sorted(REGISTRY))}")


def parse_event(subject: str, data: bytes, *, namespace: str = "") -> Event:
    """Validate a message's bytes against its subject's model; BadInputError if they don't fit."""
    logical = strip_namespace(subject, namespace)
    model = model_for_subject(logical)
    try:
        raw: Any = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{logical}: payload is not JSON ({exc})") from None
    if not isinstance(raw, dict):
        raise BadInputError(f"{logical}: payload must be a JSON object, got {type(raw).__name__}")
    version = raw.get("schema_version")
    if version is None:
        raise BadInputError(f"{logical}: payload has no schema_version")
    if type(version) is not int or version not in model.SCHEMA_VERSIONS:
        raise BadInputError(
            f"{logical}: unknown schema_version {version!r} for {model.__name__} "
            f"(accepted: {sorted(model.SCHEMA_VERSIONS)})"
        )
    try:
        event = model.model_validate(raw)
    except ValidationError as exc:
        raise BadInputError(
            f"{logical}: payload does not match {model.__name__}: {describe_validation(exc)}"
        ) from None
    if isinstance(event, DeadLetter) and event.subject != logical:
        raise BadInputError(
            f"{logical}: dead letter names original_subject {event.original_subject!r}"
        )
    return event


def peek_event_id(data: bytes) -> str | None:
    """Best-effort event id from a payload that may be malformed (for logs)."""
    try:
        raw = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    value = raw.get("event_id") if isinstance(raw, dict) else None
    return value if isinstance(value, str) and len(value) <= 200 else None
