"""A local, push-updated copy of the limiter's KV bucket (one `kv.watchall()` per instance).

It saves round trips, never correctness: a decision made from a stale copy fails the
revision check of its compare-and-swap and is retried from fresh state.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable

from nats.js.kv import KV_DEL, KV_PURGE, KeyValue

from shared.llm.limiting import ModelClass, is_model_class

log = logging.getLogger("shared.llm.limiter")


Known = tuple[bytes | None, int | None]  # (value, revision); (None, None) = key absent


class KvMirror:
    """Mirrors every key (value + revision); reports new states and pauses as they arrive."""

    def __init__(
        self,
        *,
        on_pause: Callable[[ModelClass, float], None],
        on_state_change: Callable[[ModelClass], None],
    ) -> None:
        self._on_pause = on_pause
        self._on_state_change = on_state_change
        self._task: asyncio.Task[None] | None = None
        self._synced = asyncio.Event()
        self._values: dict[str, tuple[bytes | None, int]] = {}
        self._changed = asyncio.Event()  # replaced after each set: a broadcast

    @property
    def running(self) -> bool:
        """Whether a watcher task is alive."""
        return self._task is not None and not self._task.done()

    async def start(self, kv: KeyValue, *, timeout_s: float) -> None:
        """Watch the bucket and wait (up to `timeout_s`) for the current values."""
        self.stop()
        watcher = await asyncio.wait_for(kv.watchall(), timeout_s)
        self._task = asyncio.ensure_future(self._run(watcher))
        try:
            # Before the first decision, learn the pauses already announced.
            await asyncio.wait_for(self._synced.wait(), timeout_s)
        except TimeoutError:
            log.debug("rate limiter: bucket mirror not synced yet; continuing without it")

    def stop(self) -> None:
        """Stop watching and forget everything (the copy would go stale)."""
        self._synced.clear()
        self._values.clear()
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def aclose(self) -> None:
        """Stop and wait for the watcher task to finish."""
        task = self._task
        self.stop()
        if task is not None:
            await asyncio.gather(task, return_exceptions=True)

    def get(self, key: str) -> Known | None:
        """The mirrored value and revision of `key`, or None when the mirror cannot tell."""
        if not self._synced.is_set():
            return None
        return self._values.get(key, (None, None))

    def remember(self, key: str, value: bytes | None, revision: int) -> None:
        """Record a value (from the watcher or our own successful write) if it is newer."""
        known = self._values.get(key)
        if known is not None and revision <= known[1]:
            return
        self._values[key] = (value, revision)
        self._changed.set()
        self._changed = asyncio.Event()
        if key.startswith("gcra.") and is_model_class(cls := key.removeprefix("gcra.")):
            self._on_state_change(cls)

    async def newer(self, key: str, than: int | None, *, within_s: float) -> Known | None:
        """The mirrored value once its revision is past `than`, or None after `within_s`."""
        deadline = time.monotonic() + within_s
        while (left := deadline - time.monotonic()) > 0:
            known = self.get(key)
            if known is None:
                return None
            if known[1] is not None and (than is None or known[1] > than):
                return known
            try:
                await asyncio.wait_for(self._changed.wait(), left)
            except TimeoutError:
                return None
        return None

    async def _run(self, watcher: KeyValue.KeyWatcher) -> None:
        try:
            async for entry in watcher:
                if entry is None:
                    self._synced.set()
                elif entry.operation in (KV_DEL, KV_PURGE):
                    self._values.pop(entry.key, None)
                else:
                    self.remember(entry.key, entry.value, entry.revision or 0)
                    if entry.key.startswith("pause."):
                        self._pause(entry.key.removeprefix("pause."), entry.value)
        finally:
            if self._task is asyncio.current_task():
                self._synced.clear()  # nobody keeps the copy current any more
                self._values.clear()
            try:
                # nats-py leaves KeyWatcher.stop unannotated.
                await watcher.stop()  # type: ignore[no-untyped-call]
            except Exception:  # best effort on a closing connection
                log.debug("rate limiter: stopping the bucket watcher failed", exc_info=True)

    def _pause(self, cls: str, raw: bytes | None) -> None:
        try:
            until = float(raw or b"")
        except ValueError:
            return
        if is_model_class(cls) and math.isfinite(until):
            self._on_pause(cls, until)
