"""Subject and stream naming: per-namespace isolation and NATS wildcard overlap checks."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

from shared.errors import BadInputError, ConfigError

RPC_PREFIX = "rpc."
FAILED_PREFIX = "failed."

_NAMESPACE_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
_TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]+$")


def check_async_handler(handler: Callable[..., Any], what: str) -> None:
    """Refuse a handler that is not an async function (awaiting it would fail per message)."""
    call = getattr(handler, "__call__", None)  # noqa: B004 - async callable objects count too
    if not (inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(call)):
        raise ConfigError(f"{what} handler {handler!r} must be an async function")


def validate_namespace(namespace: str) -> str:
    """Return the namespace if usable as a subject token and stream-name suffix, else raise."""
    if namespace and not _NAMESPACE_RE.fullmatch(namespace):
        raise ConfigError(
            f"bus namespace {namespace!r} is invalid: use 1-32 letters, digits, '_' or '-'"
        )
    if f"{namespace}." in (RPC_PREFIX, FAILED_PREFIX):
        # A namespace named like a reserved prefix would put its streams over those subjects.
        raise ConfigError(f"bus namespace {namespace!r} is reserved")
    return namespace


def validate_subject(subject: str, *, wildcards: bool = False) -> str:
    """Reject an empty or malformed subject (wildcards only where `wildcards` is true)."""
    tokens = subject.split(".") if subject else []
    if not tokens:
        raise BadInputError("subject must not be empty")
    for i, token in enumerate(tokens):
        if wildcards and token == "*":
            continue
        if wildcards and token == ">" and i == len(tokens) - 1:
            continue
        if not _TOKEN_RE.fullmatch(token):
            raise BadInputError(
                f"subject {subject!r} is invalid: token {token!r} "
                f"({'wildcards *, > allowed' if wildcards else 'no wildcards allowed'})"
            )
    return subject


def ns_subject(subject: str, namespace: str = "") -> str:
    """The subject as sent on the wire: prefixed with the namespace token when one is set."""
    validate_namespace(namespace)
    return f"{namespace}.{subject}" if namespace else subject


def strip_namespace(subject: str, namespace: str = "") -> str:
    """The logical subject of a wire subject; raise if it is outside the namespace."""
    validate_namespace(namespace)
    if not namespace:
        return subject
    prefix = f"{namespace}."
    if not subject.startswith(prefix):
        raise BadInputError(f"subject {subject!r} is outside bus namespace {namespace!r}")
    return subject[len(prefix) :]


def ns_stream(name: str, namespace: str = "") -> str:
    """The stream name for a namespace (suffixed, so test streams never collide)."""
    validate_namespace(namespace)
    return f"{name}_{namespace}" if namespace else name


def subjects_overlap(a: str, b: str) -> bool:
    """Whether some concrete subject matches both patterns (NATS `*` and `>` semantics)."""
    ta, tb = a.split("."), b.split(".")
    for i in range(max(len(ta), len(tb))):
        x = ta[i] if i < len(ta) else None
        y = tb[i] if i < len(tb) else None
        if x == ">" or y == ">":
            # `>` needs at least one more token, which the other side must also allow.
            other = y if x == ">" else x
            return other is not None
        if x is None or y is None:
            return False
        if x != y and "*" not in (x, y):
            return False
    return True


def check_stream_subject(subject: str) -> str:
    """Validate a stream subject filter: well formed and never capturing an `rpc.` subject.

    A stream that captured a request subject would answer the request with its publish ack
    instead of the handler's reply, so `>` and anything overlapping `rpc.>` is refused here,
    at definition time.
    """
    validate_subject(subject, wildcards=True)
    if subjects_overlap(subject, f"{RPC_PREFIX}>"):
        raise ConfigError(
            f"stream subject {subject!r} would capture request/reply subjects ({RPC_PREFIX}*); "
            "streams must use a concrete first token such as 'source.>'"
        )
    return subject
