"""Errors raised by `call_llm`; `transient` tells services whether to nack (retry later) or term."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from shared.errors import BadInputError, PermanentError, R42Error

# Statuses where trying again later can succeed (timeouts, rate limits, overload, gateway faults).
RETRYABLE_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504, 529})


class LLMError(R42Error):
    """Base of every error the LLM library raises."""


class LLMInputError(LLMError, BadInputError):
    """The call itself was malformed (missing task, unknown tier, …); nothing was sent."""


class LLMHttpError(LLMError):
    """The API answered with an error status (or could not be reached); carries no secrets."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None,
        request_id: str | None = None,
        body: object | None = None,
        error_type: str | None = None,
        retry_after: float | None = None,
        spend_limit: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.request_id = request_id
        self.body = body
        self.error_type = error_type
        self.retry_after = retry_after
        self.spend_limit = spend_limit
        # A spend-limit 429 stays failed until someone raises the limit: term, don't nack.
        self.transient = (status is None or status in RETRYABLE_STATUSES) and not spend_limit

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(status={self.status!r}, request_id={self.request_id!r}, "
            f"error_type={self.error_type!r}, retry_after={self.retry_after!r}, "
            f"message={str(self)!r})"
        )


class LLMConnectionError(LLMHttpError):
    """No HTTP answer: the connection failed or the request timed out."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message, status=None)
        self.timed_out = timed_out


class LLMTruncatedError(LLMError, PermanentError):
    """The model hit `max_tokens` on a structured call; the output is incomplete and not parsed."""


class LLMOutputError(LLMError, PermanentError):
    """The model's text held no parsable JSON where a schema was requested."""


class LLMValidationError(LLMError, PermanentError):
    """Structured output (a tool input or parsed JSON) failed validation against its model."""


class LLMBudgetExhaustedError(LLMError, PermanentError):
    """The piece of work used every API attempt of its retry budget; trying again won't help."""


class LLMBusyError(LLMHttpError):
    """The model is paused (a shared 429 retry-after) past the caller's deadline: no wait.

    `until` is the end of the pause (epoch seconds); a person waiting is told that time
    at once instead of waiting out their whole turn for a generic apology.
    """

    def __init__(self, message: str, *, until: float) -> None:
        super().__init__(message, status=429, retry_after=max(until - time.time(), 0.0))
        self.until = until

    def local_time(self) -> str:
        """The end of the pause as HH:MM in the local time zone (TZ), rounded up a minute."""
        end = datetime.fromtimestamp(self.until + 59, tz=UTC).astimezone()
        return end.strftime("%H:%M")
