"""NATS plumbing for the shared limiter: connecting, binding the KV bucket, CAS reads/writes."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import re
from typing import Any

import nats.errors
import nats.js.errors
from nats.aio.client import Client
from nats.js.api import StorageType
from nats.js.kv import KeyValue

from shared.config import nats_servers
from shared.errors import BadInputError
from shared.llm.limiter_base import FULL, Triple

log = logging.getLogger("shared.llm.limiter")

DEFAULT_BUCKET = "r42_limits"
_BUCKET_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")

# Failures that mean "NATS cannot answer now", as opposed to a CAS conflict.
UNAVAILABLE = (nats.errors.Error, OSError, asyncio.TimeoutError)


def check_bucket(bucket: object) -> str:
    """Validate a KV bucket name (what nats-server accepts)."""
    if not isinstance(bucket, str) or not _BUCKET_RE.fullmatch(bucket):
        raise BadInputError(f"bucket must be 1-64 letters, digits, '-' or '_', got {bucket!r}")
    return bucket


async def open_connection(nats_url: str, *, connect_timeout_s: float, **options: Any) -> Client:
    """Connect, reconnecting forever afterwards; but fail fast if the first attempt errors."""
    errors: list[BaseException] = []
    first_error = asyncio.Event()

    async def on_error(exc: Exception) -> None:
        # nats-py logs each failed (re)connect at ERROR by default; the limiter's single
        # fallback warning already says NATS is down.
        log.debug("rate limiter: nats error: %s", exc)
        errors.append(exc)
        first_error.set()

    nc = Client()
    connecting = asyncio.ensure_future(
        nc.connect(
            nats_servers(nats_url),
            error_cb=on_error,
            connect_timeout=max(1, math.ceil(connect_timeout_s)),
            max_reconnect_attempts=-1,
            reconnect_time_wait=1,
            name="r42-limiter",
            **options,
        )
    )
    erroring = asyncio.ensure_future(first_error.wait())
    try:
        done, _ = await asyncio.wait(
            {connecting, erroring}, timeout=connect_timeout_s, return_when=asyncio.FIRST_COMPLETED
        )
        if connecting in done:
            connecting.result()
            return nc
        if errors:
            raise ConnectionError(f"cannot connect to NATS: {errors[0]}")
        raise TimeoutError(f"no NATS connection within {connect_timeout_s:g} s")
    except BaseException:
        connecting.cancel()
        await asyncio.gather(connecting, return_exceptions=True)
        # nats-py asserts in close() when connect() stopped before its queues existed.
        with contextlib.suppress(AssertionError):
            await nc.close()
        raise
    finally:
        erroring.cancel()


async def bind_bucket(
    nc: Client, bucket: str, *, op_timeout_s: float, replicas: int = 1
) -> KeyValue:
    """Bind the limiter's KV bucket, creating it (in memory, history 1) when missing."""
    js = nc.jetstream(timeout=op_timeout_s)
    try:
        return await js.key_value(bucket)
    except nats.js.errors.BucketNotFoundError:
        pass
    try:
        # Memory storage: the state is seconds of pacing, not data worth keeping; a
        # restarted server starts from full buckets, which the next retry-after corrects.
        return await js.create_key_value(
            bucket=bucket, history=1, storage=StorageType.MEMORY, direct=True, replicas=replicas
        )
    except nats.js.errors.BadRequestError:
        # Another process created it first, perhaps with other settings: use theirs.
        return await js.key_value(bucket)


def decode_state(raw: bytes | None) -> Triple:
    """Parse a class state; a corrupt value reads as a full bucket (then replaced via CAS)."""
    try:
        tats = json.loads(raw or b"")
        if isinstance(tats, list) and len(tats) == 3:
            t0, t1, t2 = (float(t) for t in tats)
            if all(math.isfinite(t) for t in (t0, t1, t2)):
                return (t0, t1, t2)
    except (ValueError, TypeError):
        pass
    log.warning("rate limiter: unreadable state %r replaced by a full bucket", (raw or b"")[:80])
    return FULL


def encode_state(state: Triple) -> bytes:
    """Serialise a class state (microsecond precision is plenty)."""
    return json.dumps([round(t, 6) for t in state]).encode()


async def read(kv: KeyValue, key: str) -> tuple[bytes | None, int | None]:
    """The value and revision of a key, or (None, None) when it does not exist."""
    try:
        entry = await kv.get(key)
    except nats.js.errors.KeyNotFoundError:
        return None, None
    return entry.value, entry.revision


async def write(kv: KeyValue, key: str, value: bytes, revision: int | None) -> int | None:
    """Compare-and-swap: the new revision, or None when someone else wrote the key first."""
    try:
        if revision is None:
            return await kv.create(key, value)
        return await kv.update(key, value, last=revision)
    except nats.js.errors.KeyWrongLastSequenceError:
        return None
