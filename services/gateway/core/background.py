"""Slow work after the ack: tracked tasks whose failures are logged, drained on shutdown."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


class Background:
    """Runs coroutines as tasks, keeps references (so they are not collected) and logs errors."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        """Start `coro` now; its exception, if any, is logged (never raised into the caller)."""
        task = asyncio.create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            log.error("%s failed: %s", task.get_name(), exc, exc_info=exc)

    @property
    def pending(self) -> int:
        """Tasks still running."""
        return len(self._tasks)

    async def drain(self, *, timeout: float = 30.0) -> None:  # noqa: ASYNC109
        """Wait for running tasks (new ones spawned meanwhile too); cancel what is left."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self._tasks:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            await asyncio.wait(set(self._tasks), timeout=remaining)
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
