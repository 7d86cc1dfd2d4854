"""Telemetry records of LLM calls and the pluggable sinks that receive them."""

from __future__ import annotations

import logging
from typing import Protocol, runtime_checkable

from shared.store.models_telemetry import LLMCallRecord

log = logging.getLogger(__name__)

__all__ = ["LLMCallRecord", "LoggingSink", "MemorySink", "TelemetrySink", "emit_safely"]


@runtime_checkable
class TelemetrySink(Protocol):
    """Receives call records; must not block and must not raise into the caller."""

    def emit(self, record: LLMCallRecord) -> None:
        """Hand one record to the sink (fire and forget)."""


class LoggingSink:
    """Writes each record to the log; the default when no bus is configured."""

    def emit(self, record: LLMCallRecord) -> None:
        """Log the record at INFO (errors at WARNING)."""
        level = logging.INFO if record.ok else logging.WARNING
        log.log(level, "llm call %s", record.model_dump(mode="json"))


class MemorySink:
    """Keeps records in a list (tests, benchmarks, the console)."""

    def __init__(self) -> None:
        self.records: list[LLMCallRecord] = []

    def emit(self, record: LLMCallRecord) -> None:
        """Append the record."""
        self.records.append(record)


def emit_safely(sink: TelemetrySink | None, record: LLMCallRecord) -> None:
    """Emit to a sink; a failing sink is logged and never affects the call."""
    if sink is None:
        return
    try:
        sink.emit(record)
    except Exception:  # telemetry must never fail a call
        log.warning("telemetry sink %s failed", type(sink).__name__, exc_info=True)


def note_http_error(sink: TelemetrySink | None, *, model: str, status: int | None) -> None:
    """Tell a sink that wants it (`on_http_error`) about one failed attempt; never raises."""
    hook = getattr(sink, "on_http_error", None)
    if hook is None:
        return
    try:
        hook(model=model, status=status)
    except Exception:  # telemetry must never fail a call
        log.debug("telemetry hook on_http_error failed", exc_info=True)
