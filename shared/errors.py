"""One exception tree: transient errors are retried (nack), permanent ones are not (term)."""

from __future__ import annotations


class R42Error(Exception):
    """Base of every error R42 raises on purpose."""

    transient: bool = False


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
