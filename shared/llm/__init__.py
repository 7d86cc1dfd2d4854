"""The shared LLM library: `call_llm` with retries, validation, limiting, pricing and telemetry.

Names load on first use (PEP 562): importing one module (`shared.llm.telemetry` for the
event table) must not pull in the whole library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shared.lazy import lazy_exports

if TYPE_CHECKING:
    from shared.llm.budget import (
        AttemptBudget,
        AttemptLedger,
        MemoryLedger,
        answer_within,
        attempt_budget,
        current_budget,
    )
    from shared.llm.call import call_llm
    from shared.llm.errors import (
        RETRYABLE_STATUSES,
        LLMBudgetExhaustedError,
        LLMBusyError,
        LLMConnectionError,
        LLMError,
        LLMHttpError,
        LLMInputError,
        LLMOutputError,
        LLMTruncatedError,
        LLMValidationError,
    )
    from shared.llm.limiter import (
        LimiterConfig,
        LimiterContentionError,
        LocalLimiter,
        NatsKvLimiter,
        open_limiter,
    )
    from shared.llm.limiting import Limiter, Permit, model_class
    from shared.llm.parsing import extract_json, parse_text_output
    from shared.llm.pricing import Price, cost_usd, price_for
    from shared.llm.providers import (
        OFFLINE_MODEL,
        OFFLINE_PREFIX,
        OfflineHandler,
        OfflinePlans,
        OfflineProvider,
        OfflineRequest,
        OfflineStep,
        OfflineTurn,
        Provider,
        ProviderReply,
        ProviderRequest,
    )
    from shared.llm.result import LLMResult, Usage
    from shared.llm.retry import RetryPolicy, parse_retry_after
    from shared.llm.runtime import (
        TIERS,
        LLMRuntime,
        configure_llm,
        get_runtime,
        reset_llm,
        use_runtime,
    )
    from shared.llm.stream import LLMStreamInterruptedError, StreamingProvider, TextSink
    from shared.llm.telemetry import (
        LLMCallRecord,
        LoggingSink,
        MemorySink,
        TelemetrySink,
        emit_safely,
    )
    from shared.llm.tools import Tool, ToolUse

_EXPORTS: dict[str, tuple[str, ...]] = {
    "shared.llm.budget": (
        "AttemptBudget", "AttemptLedger", "MemoryLedger", "answer_within", "attempt_budget",
        "current_budget",
    ),
    "shared.llm.call": ("call_llm",),
    "shared.llm.errors": (
        "RETRYABLE_STATUSES", "LLMBudgetExhaustedError", "LLMBusyError", "LLMConnectionError",
        "LLMError", "LLMHttpError", "LLMInputError", "LLMOutputError", "LLMTruncatedError",
        "LLMValidationError",
    ),
    "shared.llm.limiter": (
        "LimiterConfig", "LimiterContentionError", "LocalLimiter", "NatsKvLimiter", "open_limiter",
    ),
    "shared.llm.limiting": ("Limiter", "Permit", "model_class"),
    "shared.llm.parsing": ("extract_json", "parse_text_output"),
    "shared.llm.pricing": ("Price", "cost_usd", "price_for"),
    "shared.llm.providers": (
        "OFFLINE_MODEL", "OFFLINE_PREFIX", "OfflineHandler", "OfflinePlans", "OfflineProvider",
        "OfflineRequest", "OfflineStep", "OfflineTurn", "Provider", "ProviderReply",
        "ProviderRequest",
    ),
    "shared.llm.result": ("LLMResult", "Usage"),
    "shared.llm.retry": ("RetryPolicy", "parse_retry_after"),
    "shared.llm.runtime": (
        "TIERS", "LLMRuntime", "configure_llm", "get_runtime", "reset_llm", "use_runtime",
    ),
    "shared.llm.stream": ("LLMStreamInterruptedError", "StreamingProvider", "TextSink"),
    "shared.llm.telemetry": (
        "LLMCallRecord", "LoggingSink", "MemorySink", "TelemetrySink", "emit_safely",
    ),
    "shared.llm.tools": ("Tool", "ToolUse"),
}  # fmt: skip
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = [
    "OFFLINE_MODEL",
    "OFFLINE_PREFIX",
    "RETRYABLE_STATUSES",
    "TIERS",
    "AttemptBudget",
    "AttemptLedger",
    "LLMBudgetExhaustedError",
    "LLMBusyError",
    "LLMCallRecord",
    "LLMConnectionError",
    "LLMError",
    "LLMHttpError",
    "LLMInputError",
    "LLMOutputError",
    "LLMResult",
    "LLMRuntime",
    "LLMStreamInterruptedError",
    "LLMTruncatedError",
    "LLMValidationError",
    "Limiter",
    "LimiterConfig",
    "LimiterContentionError",
    "LocalLimiter",
    "LoggingSink",
    "MemoryLedger",
    "MemorySink",
    "NatsKvLimiter",
    "OfflineHandler",
    "OfflinePlans",
    "OfflineProvider",
    "OfflineRequest",
    "OfflineStep",
    "OfflineTurn",
    "Permit",
    "Price",
    "Provider",
    "ProviderReply",
    "ProviderRequest",
    "RetryPolicy",
    "StreamingProvider",
    "TelemetrySink",
    "TextSink",
    "Tool",
    "ToolUse",
    "Usage",
    "answer_within",
    "attempt_budget",
    "call_llm",
    "configure_llm",
    "cost_usd",
    "current_budget",
    "emit_safely",
    "extract_json",
    "get_runtime",
    "model_class",
    "open_limiter",
    "parse_retry_after",
    "parse_text_output",
    "price_for",
    "reset_llm",
    "use_runtime",
]


__getattr__, __dir__ = lazy_exports(__name__, _WHERE, __all__)
