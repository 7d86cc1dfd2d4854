"""Ingest progress as gauges, read from the extractor's own source.* publishes."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from faststream import BaseMiddleware
from faststream.response import PublishCommand

from shared.obs.metrics import ObsMetrics

log = logging.getLogger(__name__)

_PROGRESS = "source.progress"
_DONE = {"source.completed": "completed", "source.failed": "failed"}


class IngestProgressMiddleware:
    """A FastStream broker middleware factory: per-source chunk gauges while a source runs."""

    def __init__(self, metrics: ObsMetrics) -> None:
        self._metrics = metrics

    def __call__(self, msg: Any, /, *, context: Any) -> _Scope:
        """A scope for one message (FastStream creates one per consume or publish)."""
        return _Scope(msg, context=context, metrics=self._metrics)


class _Scope(BaseMiddleware[PublishCommand, Any]):
    def __init__(self, msg: Any, /, *, context: Any, metrics: ObsMetrics) -> None:
        super().__init__(msg, context=context)
        self._metrics = metrics

    async def publish_scope(
        self, call_next: Callable[[PublishCommand], Awaitable[Any]], cmd: PublishCommand
    ) -> Any:
        result = await call_next(cmd)
        try:
            self._observe(cmd.destination, cmd.body)
        except Exception:  # a metric never fails a publish
            log.debug("ingest metrics failed", exc_info=True)
        return result

    def _observe(self, subject: str, body: Any) -> None:
        # Namespaced subjects end with the logical one (`<ns>.source.progress`).
        logical = next((s for s in (_PROGRESS, *_DONE) if subject.endswith(s)), None)
        if logical is None or not isinstance(body, bytes | bytearray):
            return
        data = json.loads(body)
        source_id = str(data.get("source_id", ""))
        m = self._metrics
        if logical == _PROGRESS:
            m.ingest_chunks_done.labels(source_id=source_id).set(int(data["chunks_done"]))
            m.ingest_chunks_total.labels(source_id=source_id).set(int(data["chunks_total"]))
            return
        m.ingest_sources.labels(outcome=_DONE[logical]).inc()
        # A finished source leaves the gauges: their label set stays as small as the backlog.
        for gauge in (m.ingest_chunks_done, m.ingest_chunks_total):
            try:
                gauge.remove(source_id)
            except KeyError:
                pass
