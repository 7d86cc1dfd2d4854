"""The envelope every bus event carries, and the base class of all event models."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any, ClassVar, Self

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    field_validator,
    model_validator,
)

# Deterministic ids for derived events (failure events) so a re-publish after a crash dedupes.
_DERIVED_ID_NAMESPACE = uuid.UUID("6f1c3c4e-2b1f-4f4e-9d8e-5b0a7f2e4a42")


def new_event_id() -> str:
    """A fresh random event id (uuid4)."""
    return str(uuid.uuid4())


def derived_event_id(*parts: str) -> str:
    """A stable event id derived from `parts` (same parts, same id: JetStream dedupes it)."""
    return str(uuid.uuid5(_DERIVED_ID_NAMESPACE, "\x1f".join(parts)))


def _wire_schema(schema: dict[str, Any]) -> None:
    """The published schema says what `parse_event` enforces on the wire, not the defaults a
    Python producer gets: `event_id` (a UUID) and `schema_version` must be sent."""
    props = schema.get("properties", {})
    if "event_id" in props:
        props["event_id"]["format"] = "uuid"
    required = schema.setdefault("required", [])
    for name in ("event_id", "schema_version"):
        if name in props and name not in required:
            required.insert(0, name)
    if "schema_version" in props:
        props["schema_version"].pop("default", None)
        props["schema_version"]["description"] = "Payload schema version (required on the wire)."


class Payload(BaseModel):
    """Base of nested payload objects: immutable, unknown fields rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Event(BaseModel):
    """Envelope fields shared by every event; subclasses add the payload of one subject."""

    model_config = ConfigDict(extra="forbid", frozen=True, json_schema_extra=_wire_schema)

    SUBJECT: ClassVar[str] = ""
    """The logical subject (without namespace) this model is published on."""
    SCHEMA_VERSIONS: ClassVar[frozenset[int]] = frozenset({1})
    """Versions this model accepts; the highest is what it writes."""

    event_id: str = Field(
        default_factory=new_event_id,
        description="Unique id (uuid); also sent as the Nats-Msg-Id header so re-publishes dedupe.",
    )
    occurred_at: AwareDatetime = Field(
        default_factory=lambda: datetime.now(UTC), description="When it happened (UTC)."
    )
    schema_version: StrictInt = Field(
        default=1,
        description="Payload schema version; omitted when constructing means the latest.",
    )
    correlation_id: str = Field(
        default="",
        max_length=200,
        description="Ties together every event of one flow; defaults to the event id.",
    )
    actor: str = Field(
        min_length=1, max_length=200, description="User id or service name that caused it."
    )

    @model_validator(mode="before")
    @classmethod
    def _fill_defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        filled = dict(data)
        if "schema_version" not in filled:
            filled["schema_version"] = max(cls.SCHEMA_VERSIONS)
        if not filled.get("correlation_id"):
            filled.setdefault("event_id", new_event_id())
            filled["correlation_id"] = filled["event_id"]
        return filled

    @field_validator("event_id")
    @classmethod
    def _uuid(cls, value: str) -> str:
        try:
            return str(uuid.UUID(value))
        except (ValueError, AttributeError, TypeError):
            raise ValueError("event_id must be a UUID string") from None

    @field_validator("occurred_at")
    @classmethod
    def _utc(cls, value: datetime) -> datetime:
        return value.astimezone(UTC)

    @field_validator("schema_version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if value not in cls.SCHEMA_VERSIONS:
            raise ValueError(
                f"unknown schema_version {value} for {cls.__name__}; "
                f"accepted: {sorted(cls.SCHEMA_VERSIONS)}"
            )
        return value

    @property
    def subject(self) -> str:
        """The logical subject this event is published on."""
        return self.SUBJECT

    @classmethod
    def caused_by(cls, cause: Event, *, actor: str, **fields: Any) -> Self:
        """A new event in the same flow as `cause` (same correlation id)."""
        return cls(correlation_id=cause.correlation_id, actor=actor, **fields)

    def to_bytes(self) -> bytes:
        """The JSON wire form."""
        return self.model_dump_json().encode()
