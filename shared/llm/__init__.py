"""The shared LLM library: `call_llm` with retries, validation, limiting, pricing and telemetry."""

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
