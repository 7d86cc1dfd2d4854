"""Duplicate deliveries: Teams re-sends an activity (same id) it thinks was not answered.

The first process to `create` the activity's key in a shared NATS KV bucket owns it; a
bounded local set answers repeats without a round trip. Keys expire after an hour.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict

import nats.js.errors
from faststream.nats import NatsBroker
from nats.js.api import KeyValueConfig, StorageType
from nats.js.kv import KeyValue

from shared.bus import jetstream
from shared.bus.subjects import validate_namespace

log = logging.getLogger(__name__)

CLAIM_TTL_S = 3600.0
MAX_LOCAL = 20_000


def bucket_name(namespace: str = "") -> str:
    """The KV bucket of Teams activity claims (per bus namespace)."""
    validate_namespace(namespace)
    return f"r42_teams_claims_{namespace}" if namespace else "r42_teams_claims"


async def open_claims(broker: NatsBroker, *, namespace: str = "") -> KeyValue:
    """Bind (or create) the shared claims bucket."""
    js = jetstream(broker)
    bucket = bucket_name(namespace)
    try:
        return await js.key_value(bucket)
    except nats.js.errors.BucketNotFoundError:
        pass
    try:
        return await js.create_key_value(
            KeyValueConfig(bucket=bucket, history=1, ttl=CLAIM_TTL_S, storage=StorageType.FILE)
        )
    except nats.js.errors.BadRequestError:
        return await js.key_value(bucket)  # another replica created it first


class ActivityClaims:
    """claim(key) is True exactly once per key across this process and every replica."""

    def __init__(self, kv: KeyValue | None = None) -> None:
        self._kv = kv
        self._seen: OrderedDict[str, float] = OrderedDict()

    def _local(self, key: str) -> bool:
        now = time.monotonic()
        while self._seen and (
            next(iter(self._seen.values())) < now or len(self._seen) >= MAX_LOCAL
        ):
            self._seen.popitem(last=False)
        if key in self._seen:
            return False
        self._seen[key] = now + CLAIM_TTL_S
        return True

    async def claim(self, key: str) -> bool:
        """Whether the caller is the first to see `key` (and must handle it)."""
        if not key or not self._local(key):
            return not key
        if self._kv is None:
            return True
        digest = hashlib.sha256(key.encode()).hexdigest()[:40]
        try:
            await self._kv.create(digest, b"1")
        except nats.js.errors.KeyWrongLastSequenceError:
            return False  # another replica owns it
        except Exception as exc:  # the bus is down: answering twice beats never answering
            log.warning("teams claim %s not shared (%s); handling it here", digest[:12], exc)
        return True
