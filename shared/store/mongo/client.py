"""The MongoDB connection (PyMongo's AsyncMongoClient), transactions and error translation."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from pymongo import AsyncMongoClient
from pymongo.asynchronous.client_session import AsyncClientSession
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import (
    ConfigurationError,
    ConnectionFailure,
    DuplicateKeyError,
    OperationFailure,
    PyMongoError,
)

from shared.errors import ConfigError, R42Error, StoreError, StoreUnavailableError
from shared.store.mongo.queries import database_name, supports_transactions

T = TypeVar("T")
C = TypeVar("C", bound=type)

Session = AsyncClientSession | None


def translate(exc: PyMongoError) -> R42Error:
    """Map a PyMongo error onto the R42 tree (credentials never appear: messages only)."""
    if isinstance(exc, ConnectionFailure):
        return StoreUnavailableError(f"MongoDB is unreachable: {type(exc).__name__}")
    if isinstance(exc, ConfigurationError):
        return ConfigError(f"MongoDB configuration is invalid: {exc}")
    if isinstance(exc, OperationFailure) and exc.has_error_label("TransientTransactionError"):
        return StoreUnavailableError(f"MongoDB transaction conflict; try again ({exc.code})")
    return StoreError(f"MongoDB failed: {type(exc).__name__} ({getattr(exc, 'code', None)})")


def mongo_errors[C: type](cls: C) -> C:
    """Class decorator: public coroutine methods raise R42 errors instead of PyMongo's."""
    for name, member in list(vars(cls).items()):
        if name.startswith("_") or not inspect.iscoroutinefunction(member):
            continue
        setattr(cls, name, _wrap(member))
    return cls


def _wrap(method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(method)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return await method(*args, **kwargs)
        except PyMongoError as exc:
            raise translate(exc) from None

    return wrapper


def _scrub(message: str, url: str) -> str:
    # PyMongo's URI errors may quote the URI; never let a password reach a log line.
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    return message.replace(password, "***") if password else message


def upserted(doc: dict[str, Any] | None) -> dict[str, Any]:
    """The document an upserting find_one_and_update returned (it always returns one)."""
    if doc is None:
        raise StoreError("MongoDB returned no document for an upsert")
    return doc


class MongoDb:
    """One client and database; knows whether multi-document transactions are available."""

    def __init__(self, url: str, *, database: str | None = None, timeout_ms: int = 10_000) -> None:
        # A keyword would override the URL's own option: the default applies only without one.
        query = urlsplit(url).query.lower() if "?" in url else ""
        given = any(p.partition("=")[0] == "serverselectiontimeoutms" for p in query.split("&"))
        timeout: dict[str, Any] = {} if given else {"serverSelectionTimeoutMS": timeout_ms}
        try:
            self.client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(
                url, tz_aware=True, appname="r42", **timeout
            )
        except PyMongoError as exc:
            error = translate(exc)
            raise type(error)(_scrub(str(error), url)) from None
        self.db: AsyncDatabase[dict[str, Any]] = self.client[database or database_name(url)]
        self.transactions = False

    async def connect(self) -> None:
        """Connect and detect the topology (replica set or mongos → transactions)."""
        try:
            await self.client.aconnect()
            hello = await self.client.admin.command("hello")
        except PyMongoError as exc:
            raise translate(exc) from None
        self.transactions = supports_transactions(hello)

    async def atomic(self, fn: Callable[[Session], Awaitable[T]]) -> T:
        """Run fn in a transaction when the server supports them, else directly (session None).

        Without transactions each adapter orders its writes so that a crash in the middle
        leaves a state that a retry completes (idempotent upserts first, markers last).
        """
        if not self.transactions:
            return await fn(None)
        async with self.client.start_session() as session:
            # with_transaction retries fn on TransientTransactionError; fn must be re-runnable.
            return await session.with_transaction(fn)

    def __getitem__(self, name: str) -> AsyncCollection[dict[str, Any]]:
        return self.db[name]

    async def close(self) -> None:
        """Close the client."""
        await self.client.close()


__all__ = ["DuplicateKeyError", "MongoDb", "Session", "mongo_errors", "translate", "upserted"]
