"""Field types shared by the store models: topic ids, UTC timestamps, ISO weeks."""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, StringConstraints, ValidationError

from shared.errors import BadInputError

TOPIC_ID_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
TOPIC_ID_RE = re.compile(TOPIC_ID_PATTERN)
_KEBAB_HINT = "is not a lowercase kebab-case id (letters a-z, digits, single hyphens)"
ISO_WEEK_RE = re.compile(r"^\d{4}-W(0[1-9]|[1-4]\d|5[0-3])$")


def normalise_time(value: datetime) -> datetime:
    """Make a datetime UTC-aware and truncate it to milliseconds (what MongoDB keeps)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    value = value.astimezone(UTC)
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def utcnow() -> datetime:
    """The current time as the store keeps it (UTC, millisecond precision)."""
    return normalise_time(datetime.now(UTC))


def iso_week(moment: datetime | None = None) -> str:
    """The ISO week of a moment as 'YYYY-Www' (the week key of scores and the curriculum)."""
    year, week, _ = (moment or datetime.now(UTC)).isocalendar()
    return f"{year:04d}-W{week:02d}"


def _check_week(value: str) -> str:
    if not ISO_WEEK_RE.fullmatch(value):
        raise ValueError(f"{value!r} is not an ISO week like '2026-W07'")
    return value


def normalise_question_key(text: str) -> str:
    """The dedup key of a quiz question: accents, case, punctuation and spacing removed."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch)).lower()
    return " ".join(re.sub(r"[^\w]+", " ", stripped).split())


# A pattern (checked in pydantic-core) rather than a Python validator: ids are validated
# on every bulk read of the graph; describe_validation gives the friendly message.
TopicId = Annotated[str, StringConstraints(max_length=120, pattern=TOPIC_ID_PATTERN)]
UtcDatetime = Annotated[datetime, AfterValidator(normalise_time)]
Week = Annotated[str, AfterValidator(_check_week)]
NonEmpty = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


M = TypeVar("M", bound=BaseModel)


def build[M: BaseModel](model: type[M], /, **fields: Any) -> M:
    """Validate arguments into a model, turning a ValidationError into BadInputError."""
    try:
        return model.model_validate(fields)
    except ValidationError as exc:
        raise BadInputError(f"invalid {model.__name__}: {describe_validation(exc)}") from exc


def describe_validation(exc: ValidationError) -> str:
    """A one-line, human reason for a pydantic ValidationError."""
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(p) for p in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        if (error.get("ctx") or {}).get("pattern") == TOPIC_ID_PATTERN:
            message = f"{error['input']!r} {_KEBAB_HINT}"
        parts.append(f"{where}: {message}" if where else message)
    return "; ".join(parts)


def need(value: str, message: str) -> str:
    """The value, or BadInputError(message) when it is empty or blank."""
    if not isinstance(value, str) or not value.strip():
        raise BadInputError(message)
    return value


def check_ttl(ttl_s: float) -> timedelta:
    """A positive lifetime as a timedelta (at least the store's millisecond resolution)."""
    if not ttl_s > 0:
        raise BadInputError(f"a lifetime must be positive seconds, not {ttl_s!r}")
    return timedelta(seconds=max(ttl_s, 0.001))
