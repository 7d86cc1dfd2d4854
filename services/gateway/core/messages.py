"""What to tell a person about a failure, the same on every surface."""

from __future__ import annotations

import logging
import uuid

from services.gateway.core.context import ForbiddenError
from shared.errors import BadInputError, BusError, NotFoundError, R42Error

log = logging.getLogger(__name__)


def user_message(exc: BaseException) -> str:
    """R42 errors are safe to show as they are; anything else gets a reference for the logs."""
    if isinstance(exc, BusError):
        return f"R42 is even niet bereikbaar ({exc}). Probeer het zo opnieuw."
    if isinstance(exc, (BadInputError, NotFoundError, ForbiddenError)):
        return str(exc)
    if isinstance(exc, R42Error):
        return f"Er ging iets mis: {exc}"
    ref = uuid.uuid4().hex[:8]
    log.error("unexpected error (ref %s)", ref, exc_info=exc)
    return f"Er ging iets mis (referentie {ref})."
