"""Cancelling running sources: a per-process registry of source tasks.

Replicas share the durable `source.cancelled` consumer, so only one of them would hear a
cancel through it. Each replica therefore also listens to the subject on plain core NATS
(no queue group: every replica gets every cancel) and cancels the task it runs, aborting
the in-flight LLM call. The durable consumer records the status in the store, and the
LLM step checks that status between chunks, which covers a replica that missed the
broadcast (e.g. while reconnecting): then the source stops after its current call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

from shared.errors import PermanentError

log = logging.getLogger(__name__)

T = TypeVar("T")


class SourceCancelledError(PermanentError):
    """Extraction of the source was cancelled on request."""

    def __init__(self, source_id: str) -> None:
        super().__init__(f"source {source_id} was cancelled")
        self.source_id = source_id


class AlreadyRunningError(PermanentError):
    """The source was being extracted by this process (a duplicate delivery); that run is over.

    `failure` is how that run ended when it did not succeed (None: it succeeded or was
    cancelled).
    """

    def __init__(self, message: str, *, failure: BaseException | None = None) -> None:
        super().__init__(message)
        self.failure = failure


class SourceTasks:
    """The extraction tasks this process runs, by source id."""

    def __init__(self) -> None:
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        self._cancelled: set[str] = set()

    def running(self) -> list[str]:
        """Ids of the sources being extracted here."""
        return sorted(self._tasks)

    async def run(self, source_id: str, work: Coroutine[Any, Any, T]) -> T:
        """Run `work` as the task of `source_id`; SourceCancelledError if cancel() stops it."""
        running = self._tasks.get(source_id)
        if running is not None:
            work.close()
            # The duplicate's handler returns (and its delivery is acked, which acks the one
            # message) only once that run is over: acked earlier, a crash of this process
            # would leave the source half done with nothing left to redeliver.
            await asyncio.wait({running})
            failure = None if running.cancelled() else running.exception()
            raise AlreadyRunningError(
                f"source {source_id} was already being extracted here", failure=failure
            )
        task = asyncio.create_task(work, name=f"extract:{source_id}")
        self._tasks[source_id] = task
        try:
            return await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            # Our own cancellation (shutdown) propagates; only a requested cancel is converted.
            if source_id in self._cancelled and not (current and current.cancelling()):
                raise SourceCancelledError(source_id) from None
            raise
        finally:
            self._tasks.pop(source_id, None)
            self._cancelled.discard(source_id)

    def cancel(self, source_id: str) -> bool:
        """Cancel the source's task if it runs here (the in-flight LLM call is aborted)."""
        task = self._tasks.get(source_id)
        if task is None or task.done():
            return False
        self._cancelled.add(source_id)
        task.cancel()
        log.info("cancelled the running extraction of %s", source_id)
        return True
