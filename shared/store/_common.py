"""Field types shared by the store models: topic ids, UTC timestamps, ISO weeks.

`iso_week` and `describe_validation` are shared.weeks' and shared.validation's (re-exported).
"""

from __future__ import annotations

import re
import unicodedata
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, TypeVar

from pydantic import AfterValidator, BaseModel, StringConstraints, ValidationError

from shared.errors import BadInputError
from shared.validation import KEBAB_ID_PATTERN, describe_validation
from shared.weeks import ISO_WEEK_RE, iso_week

TOPIC_ID_PATTERN = KEBAB_ID_PATTERN
TOPIC_ID_RE = re.compile(TOPIC_ID_PATTERN)


def normalise_time(value: datetime) -> datetime:
    """Make a datetime UTC-aware and truncate it to milliseconds (what MongoDB keeps)."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    value = value.astimezone(UTC)
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def utcnow() -> datetime:
    """The current time as the store keeps it (UTC, millisecond precision)."""
    return normalise_time(datetime.now(UTC))


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


__all__ = ["describe_validation", "iso_week"]
