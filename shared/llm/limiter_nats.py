"""`NatsKvLimiter`: GCRA budgets shared by every process through a NATS JetStream KV bucket.

State: one key per model class (`gcra.<class>`, JSON [tat_requests, tat_input,
tat_output] in epoch seconds), written only with compare-and-swap on its revision, so
concurrent processes can never both spend the same capacity. Pauses: one key per class
(`pause.<class>`, epoch seconds) that only ever grows. Every instance mirrors the bucket
through a watcher, so honouring a pause costs no round trip and a booking usually costs
one (the write).

Wall-clock time is shared state here: hosts must run NTP (a skew of d seconds shifts one
host's admissions by d). All processes sharing a bucket must use the same LimiterConfig.
When NATS is unreachable the limiter falls back to an in-process `LocalLimiter` (one
warning per outage), tries NATS again every `retry_nats_after_s` in the background, and
logs when it is back; admissions made during the outage are not written back.
"""

from __future__ import annotations

import asyncio
import logging
import math
import random
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal, TypeVar

from nats.aio.client import Client
from nats.js.kv import KeyValue

from shared.errors import BadInputError
from shared.llm.limiter_base import FULL, BaseLimiter, LimiterContentionError, LocalLimiter, Triple
from shared.llm.limiter_config import LimiterConfig
from shared.llm.limiter_gcra import adjust, book
from shared.llm.limiter_kv import (
    DEFAULT_BUCKET,
    UNAVAILABLE,
    bind_bucket,
    check_bucket,
    decode_state,
    encode_state,
    open_connection,
    read,
    write,
)
from shared.llm.limiter_mirror import KvMirror
from shared.llm.limiting import ModelClass

log = logging.getLogger("shared.llm.limiter")

_CAS_JITTER_S = 0.0005
# After a CAS conflict, how long to wait for the mirror to receive the winning write
# before reading it ourselves (the push normally lands well under a millisecond later).
_PUSH_WAIT_S = 0.003

R = TypeVar("R")
_Step = tuple[bytes | None, R]


class NatsKvLimiter(BaseLimiter):
    """GCRA budgets in a NATS KV bucket (CAS on revision), with a local fallback."""

    def __init__(
        self,
        *,
        config: LimiterConfig | None = None,
        bucket: str = DEFAULT_BUCKET,
        nats_url: str | None = None,
    ) -> None:
        super().__init__(config)
        self.bucket = check_bucket(bucket)
        self._nats_url = nats_url
        self.replicas = 1
        self._connect_options: dict[str, Any] = {}
        self._nc: Client | None = None
        self._owns_client = False
        self._kv: KeyValue | None = None
        self._local = LocalLimiter(self.config)
        self._mode: Literal["nats", "local"] = "local"
        self._warned = False
        self._retry_at = 0.0
        self._recovering: asyncio.Task[None] | None = None
        self._mirror = KvMirror(on_pause=self.note_pause, on_state_change=self._signal_change)
        self._starting: asyncio.Task[None] | None = None

    # -- construction --------------------------------------------------------------------
    @classmethod
    async def connect(
        cls,
        nats_url: str,
        *,
        bucket: str = DEFAULT_BUCKET,
        config: LimiterConfig | None = None,
        connect_options: Mapping[str, Any] | None = None,
        replicas: int = 1,
    ) -> NatsKvLimiter:
        """Connect to NATS and bind (or create) the bucket; falls back to local if unreachable."""
        if not isinstance(nats_url, str) or not nats_url.strip():
            raise BadInputError("nats_url must be a non-empty string like nats://host:4222")
        limiter = cls(config=config, bucket=bucket, nats_url=nats_url)
        limiter.replicas = replicas
        limiter._connect_options = dict(connect_options or {})  # credentials, inbox prefix
        try:
            limiter._nc = await limiter._open()
            limiter._owns_client = True
            limiter._kv = await limiter._bind(limiter._nc)
            limiter._mode = "nats"
        except UNAVAILABLE as exc:
            limiter._enter_fallback(exc)
        return limiter

    @classmethod
    async def from_client(
        cls, nc: Client, *, bucket: str = DEFAULT_BUCKET, config: LimiterConfig | None = None
    ) -> NatsKvLimiter:
        """Share an existing NATS connection (`aclose` leaves it open)."""
        if not isinstance(nc, Client):
            raise BadInputError(f"from_client needs a nats Client, got {type(nc).__name__}")
        limiter = cls(config=config, bucket=bucket)
        limiter._nc = nc
        try:
            limiter._kv = await limiter._bind(nc)
            limiter._mode = "nats"
        except UNAVAILABLE as exc:
            limiter._enter_fallback(exc)
        return limiter

    @property
    def mode(self) -> Literal["nats", "local"]:
        """Which backend decides right now."""
        return self._mode

    async def _open(self) -> Client:
        url = self._nats_url or ""
        return await open_connection(
            url, connect_timeout_s=self.config.connect_timeout_s, **self._connect_options
        )

    async def _bind(self, nc: Client) -> KeyValue:
        return await bind_bucket(
            nc, self.bucket, op_timeout_s=self.config.kv_timeout_s, replicas=self.replicas
        )

    async def aclose(self) -> None:
        """Stop the watcher and background work; close the connection if we opened it."""
        await super().aclose()  # pending refunds land before the connection goes
        for task in (self._recovering, self._starting):
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        await self._mirror.aclose()
        nc, self._nc, self._kv, self._mode = self._nc, None, None, "local"
        if nc is not None and self._owns_client and not nc.is_closed:
            await nc.close()

    # -- mode switching ------------------------------------------------------------------
    def _enter_fallback(self, exc: BaseException) -> None:
        self._mode = "local"
        self._retry_at = time.monotonic() + self.config.retry_nats_after_s
        self._mirror.stop()
        if not self._warned:
            self._warned = True
            self.stats.fallbacks += 1
            log.warning(
                "rate limiter: NATS KV bucket %r unavailable (%s: %s); limiting in-process "
                "only until it is back",
                self.bucket, type(exc).__name__, exc,
            )  # fmt: skip

    def _use_nats(self) -> bool:
        if self._mode == "nats":
            if self._nc is not None and self._nc.is_connected:
                return True
            self._enter_fallback(ConnectionError("NATS connection lost"))
            return False
        if time.monotonic() >= self._retry_at and (
            self._recovering is None or self._recovering.done()
        ):
            self._retry_at = time.monotonic() + self.config.retry_nats_after_s
            # In the background: a decision never waits for a reconnect attempt.
            self._recovering = asyncio.ensure_future(self._recover())
        return False

    async def _recover(self) -> None:
        """Get a connection and the bucket back (a restarted server may have lost it)."""
        try:
            nc = self._nc
            if nc is None or nc.is_closed:
                if not self._nats_url:
                    return
                nc = self._nc = await self._open()
                self._owns_client = True
            if not nc.is_connected:
                return  # nats-py is still reconnecting on its own; try again later
            kv = await self._bind(nc)
        except UNAVAILABLE as exc:
            log.debug("rate limiter: NATS still unavailable: %s", exc)
            return
        self._kv, self._mode = kv, "nats"
        if self._warned:
            self._warned = False
            log.info("rate limiter: NATS KV bucket %r is back; sharing budgets again", self.bucket)

    async def _start(self) -> None:
        if self._mirror.running or not self._use_nats():
            return
        if self._starting is None or self._starting.done():
            self._starting = asyncio.ensure_future(self._start_mirror())
        # Shielded: a caller cancelled mid-start must not leave a half-made watcher behind.
        await asyncio.shield(self._starting)

    async def _start_mirror(self) -> None:
        if self._kv is None:
            return
        try:
            await self._mirror.start(self._kv, timeout_s=self.config.kv_timeout_s)
        except UNAVAILABLE as exc:
            self._enter_fallback(exc)

    # -- compare-and-swap ----------------------------------------------------------------
    async def _cas(self, key: str, step: Callable[[bytes | None, int | None], _Step[R]]) -> R:
        """Read-modify-write `key` until the CAS lands; `step` gives (new value or None, result).

        The first attempt works from the mirror, so an uncontended decision costs one round
        trip (the write), or none when nothing is written; a stale copy only fails the
        revision check.
        """
        kv = self._kv
        if kv is None:
            raise ConnectionError("limiter is closed")
        known = self._mirror.get(key)
        for _ in range(self.config.max_cas_attempts):
            raw, revision = known if known is not None else await read(kv, key)
            value, result = step(raw, revision)
            if value is None:
                return result
            new_revision = await write(kv, key, value, revision)
            if new_revision is not None:
                self._mirror.remember(key, value, new_revision)
                return result
            self.stats.cas_conflicts += 1
            # Someone else just wrote; the mirror is usually about to receive it, which
            # saves a read. A tiny jitter de-synchronises retries; never a real backoff.
            known = await self._mirror.newer(key, revision, within_s=_PUSH_WAIT_S)
            if known is None:
                await asyncio.sleep(random.uniform(0, _CAS_JITTER_S))
        raise LimiterContentionError(
            f"rate limiter key {key} changed {self.config.max_cas_attempts} times in a row"
        )

    async def _cas_try_book(self, cls: ModelClass, costs: Triple) -> tuple[bool, float]:
        def step(raw: bytes | None, revision: int | None) -> _Step[tuple[bool, float]]:
            state = decode_state(raw) if revision is not None else FULL
            booking = book(state, time.time(), costs, self.rates[cls])
            if not self._within_reach(booking):
                return None, (False, booking.wait)
            return encode_state(booking.state), (True, booking.wait)

        return await self._cas(f"gcra.{cls}", step)

    # -- backend hooks -------------------------------------------------------------------
    async def _try_book(self, cls: ModelClass, costs: Triple) -> tuple[bool, float]:
        if not self._use_nats():
            return self._local.try_book_now(cls, costs)
        # Shielded so a cancelled caller cannot leave a booking in flight that we would not
        # know about; if it lands after the caller is gone, it is refunded.
        task = self._spawn(self._cas_try_book(cls, costs))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.add_done_callback(lambda t: self._refund_orphan(t, cls, costs))
            raise
        except UNAVAILABLE as exc:
            self._enter_fallback(exc)
            return self._local.try_book_now(cls, costs)

    def _refund_orphan(
        self, task: asyncio.Task[tuple[bool, float]], cls: ModelClass, costs: Triple
    ) -> None:
        if task.cancelled() or task.exception() is not None or not task.result()[0]:
            return
        self._spawn(self._adjust(cls, (-costs[0], -costs[1], -costs[2])))

    async def _adjust(self, cls: ModelClass, deltas: Triple) -> None:
        def step(raw: bytes | None, revision: int | None) -> _Step[None]:
            state = decode_state(raw) if revision is not None else FULL
            return encode_state(adjust(state, time.time(), deltas, self.rates[cls])), None

        if self._use_nats():
            try:
                await self._cas(f"gcra.{cls}", step)
                return
            except UNAVAILABLE as exc:
                self._enter_fallback(exc)
            except LimiterContentionError:
                log.warning("rate limiter: %s usage correction dropped (contention)", cls)
                return
        self._local.adjust_now(cls, deltas)
        self._signal_change(cls)

    async def _announce_pause(self, cls: ModelClass, until: float) -> None:
        def step(raw: bytes | None, revision: int | None) -> _Step[float]:
            try:
                current = float(raw or b"0") if revision is not None else 0.0
            except ValueError:
                current = 0.0
            if math.isfinite(current) and current >= until:
                return None, current  # already paused at least this long: never shorten
            return repr(until).encode(), until

        if not self._use_nats():
            return
        try:
            self.note_pause(cls, await self._cas(f"pause.{cls}", step))
        except UNAVAILABLE as exc:
            self._enter_fallback(exc)
        except LimiterContentionError:
            log.warning("rate limiter: the %s pause could not be shared (contention)", cls)
