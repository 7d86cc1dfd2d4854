"""What both adapters share about audit entries: checking them and the read bound."""

from __future__ import annotations

import json

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

from shared.errors import BadInputError
from shared.store._common import describe_validation
from shared.store.models_audit import AUDIT_LATEST_MAX, AuditEntry


def checked_entry(entry: AuditEntry) -> AuditEntry:
    """The entry re-validated, before/after as JSON gives them back (what a read returns)."""
    if not isinstance(entry, BaseModel) or not isinstance(entry, AuditEntry):
        raise BadInputError(f"an audit entry must be an AuditEntry, not {type(entry).__name__}")
    try:
        checked = AuditEntry.model_validate(entry.model_dump())
        data = checked.model_dump(mode="json", include={"before", "after"})
        data = json.loads(json.dumps(data, allow_nan=False))
    except ValidationError as exc:
        raise BadInputError(f"invalid AuditEntry: {describe_validation(exc)}") from exc
    except (PydanticSerializationError, TypeError, ValueError) as exc:
        raise BadInputError(f"audit before/after must be JSON-serialisable: {exc}") from exc
    return checked.model_copy(update=data)


def check_limit(limit: int) -> int:
    """The limit of latest(), or BadInputError."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= AUDIT_LATEST_MAX:
        raise BadInputError(f"limit must be 1..{AUDIT_LATEST_MAX}, not {limit!r}")
    return limit
