"""Duplicate deliveries for every surface: a bounded TTL set per process plus a NATS KV claim.

Slack re-sends an event (X-Slack-Retry-Num) and Teams an activity (same id) when the first
delivery was not answered in time — sometimes while we are still working on it, sometimes to
another replica. The first process to `create` the key in the surface's shared KV bucket owns
it; everyone else drops it. Keys expire with the bucket's max age, well after the last retry.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import OrderedDict
from collections.abc import Callable

import nats.js.errors
from faststream.nats import NatsBroker
from nats.js.api import KeyValueConfig, StorageType
from nats.js.kv import KeyValue

from shared.bus import jetstream

log = logging.getLogger(__name__)

CLAIM_TTL_S = 3600.0
"""Retries come within minutes; an hour covers them with margin."""


class TtlSet:
    """A bounded set whose members expire after `ttl` seconds (oldest evicted first)."""

    def __init__(
        self, *, ttl: float, max_items: int = 20_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._ttl = ttl
        self._max = max_items
        self._clock = clock
        self._items: OrderedDict[str, float] = OrderedDict()

    def add(self, key: str) -> bool:
        """Add a key; False when it was already present and not expired."""
        now = self._clock()
        while self._items:
            _, expires = next(iter(self._items.items()))
            if expires > now and len(self._items) < self._max:
                break
            self._items.popitem(last=False)
        if key in self._items:
            return False
        self._items[key] = now + self._ttl
        return True

    def __len__(self) -> int:
        return len(self._items)


async def open_claims(broker: NatsBroker, *, bucket: str, replicas: int = 1) -> KeyValue:
    """Bind (or create, with `replicas`) a surface's shared claims bucket."""
    js = jetstream(broker)
    try:
        return await js.key_value(bucket)
    except nats.js.errors.BucketNotFoundError:
        pass
    try:
        return await js.create_key_value(
            KeyValueConfig(
                bucket=bucket,
                history=1,
                ttl=CLAIM_TTL_S,
                storage=StorageType.FILE,
                replicas=replicas,
            )
        )
    except nats.js.errors.BadRequestError:
        return await js.key_value(bucket)  # another replica created it first


class Deduper:
    """claim(key) is True exactly once per key across this process and every replica."""

    def __init__(self, *, kv: KeyValue | None = None, ttl: float = CLAIM_TTL_S) -> None:
        self._local = TtlSet(ttl=ttl)
        self._kv = kv

    async def claim(self, key: str) -> bool:
        """Whether the caller is the first to see `key` (and must handle it)."""
        if not key:
            return True
        if not self._local.add(key):
            return False
        if self._kv is None:
            return True
        digest = hashlib.sha256(key.encode()).hexdigest()[:40]
        try:
            await self._kv.create(digest, b"1")
        except nats.js.errors.KeyWrongLastSequenceError:
            return False  # another replica claimed it
        except Exception as exc:  # the bus is down: answering twice beats never answering
            log.warning("dedupe claim for %s not shared (%s); handling it here", digest[:12], exc)
        return True
