"""One exception tree: transient errors are retried (nack), permanent ones are not (term)."""

from __future__ import annotations

from typing import Self


class R42Error(Exception):
    """Base of every error R42 raises on purpose."""

    transient: bool = False
    code: str | None = None
    """A stable reason, with `params`, that each surface words in its own language."""
    params: dict[str, str | int] = {}  # noqa: RUF012 - replaced per instance by with_code

    def with_code(self, code: str, **params: str | int) -> Self:
        """This error, tagged with a typed reason (it travels over rpc with the message)."""
        self.code, self.params = code, dict(params)
        return self


class TransientError(R42Error):
    """A failure that may succeed when tried again (network, overload, lock)."""

    transient = True


class PermanentError(R42Error):
    """A failure that will fail again with the same input (bad input, bug, refusal)."""

    transient = False


class ConfigError(PermanentError):
    """Settings are missing or invalid."""


class BadInputError(PermanentError):
    """Input from a user, file, event or model was rejected; nothing was changed."""


class NotFoundError(PermanentError):
    """A referenced object does not exist."""


class StoreError(R42Error):
    """The store failed (corrupt file, unreachable server)."""


class StoreUnavailableError(StoreError, TransientError):
    """The store is busy or unreachable; try again."""


class StoreCorruptError(StoreError, PermanentError):
    """The store cannot be read (corrupt or not a database)."""


class BusError(TransientError):
    """The message bus is unreachable or refused a publish."""


def is_transient(exc: BaseException) -> bool:
    """Whether an exception should be retried (nack) rather than given up on (term)."""
    if isinstance(exc, R42Error):
        return exc.transient
    return isinstance(exc, (ConnectionError, TimeoutError, OSError))
