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
        log.log(level, "%s", describe_call(record))


def describe_call(record: LLMCallRecord) -> str:
    """One readable log line for a call record (the full record goes to the telemetry sink)."""
    outcome = "ok" if record.ok else f"failed: {record.error_msg or 'unknown error'}"
    return (
        f"llm call {record.task} on {record.model} ({record.provider}) {outcome} in "
        f"{record.duration_ms / 1000:.1f} s, {record.input_tokens} in / "
        f"{record.output_tokens} out tokens, ${record.cost_usd:.4f}"
    )


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
