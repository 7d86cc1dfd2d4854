"""The eval's LLM runtime: the configured provider, a MemorySink, and a reply recorder."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

from evals.models import LlmUsage
from shared.config import Settings
from shared.llm import (
    OFFLINE_MODEL,
    TIERS,
    Limiter,
    LimiterConfig,
    LLMCallRecord,
    MemorySink,
    OfflinePlans,
    OfflineProvider,
    Provider,
    ProviderReply,
    ProviderRequest,
    configure_llm,
    open_limiter,
    reset_llm,
)

log = logging.getLogger(__name__)


class RecordingProvider:
    """Passes every request to the configured provider and keeps the replies.

    Suites read which tools the model called (a chat turn's lookups and proposals) and
    what it emitted before the service post-processed it (quiz answer positions).
    """

    def __init__(self, inner: Provider) -> None:
        self.inner = inner
        self.name = inner.name
        self.rate_limited = inner.rate_limited
        self.replies: list[ProviderReply] = []

    async def create(self, request: ProviderRequest) -> ProviderReply:
        """Forward one attempt and record the reply."""
        reply = await self.inner.create(request)
        self.replies.append(reply)
        return reply

    async def aclose(self) -> None:
        """Close the wrapped provider."""
        await self.inner.aclose()

    def mark(self) -> int:
        """A position to read replies from later."""
        return len(self.replies)

    def tool_uses_since(self, mark: int) -> list[dict[str, Any]]:
        """The tool_use blocks of the replies recorded after `mark`, in order."""
        return [
            block
            for reply in self.replies[mark:]
            for block in reply.content
            if block.get("type") == "tool_use"
        ]


@dataclass
class EvalLlm:
    """What the runner hands to suites: provider name, recorder, sink and limiter."""

    provider: str
    recorder: RecordingProvider
    sink: MemorySink
    limiter: Limiter | None
    models: dict[str, str] = field(default_factory=dict)

    def offline_plans(self, plans: OfflinePlans) -> contextlib.AbstractContextManager[None]:
        """Let the offline provider play one service's plans for a block (as its host would)."""
        if isinstance(self.recorder.inner, OfflineProvider):
            return self.recorder.inner.using(plans)
        return contextlib.nullcontext()

    def records_since(self, mark: int) -> list[LLMCallRecord]:
        """Telemetry records emitted after `mark` (a length of sink.records)."""
        return self.sink.records[mark:]


def usage_of(records: Iterable[LLMCallRecord]) -> LlmUsage:
    """Counts, tokens and cost of a set of call records."""
    usage = LlmUsage()
    for record in records:
        reason = record.stop_reason or ("error" if not record.ok else "none")
        usage = usage.plus(
            LlmUsage(
                calls=1,
                failed=0 if record.ok else 1,
                input_tokens=record.input_tokens,
                output_tokens=record.output_tokens,
                cache_read_input_tokens=record.cache_read_input_tokens,
                cache_creation_input_tokens=record.cache_creation_input_tokens,
                cost_usd=record.cost_usd,
                stop_reasons={reason: 1},
            )
        )
    return usage


async def _limiter_for(settings: Settings) -> Limiter | None:
    # The eval runs in one process; the shared NATS limiter only when a stack's NATS is set.
    mode = settings.limiter
    if mode == "nats" and not settings.nats_url:
        mode = "local"
    config = LimiterConfig.model_validate(settings.limits) if settings.limits else None
    return await open_limiter(
        mode=mode, nats_url=settings.nats_url, config=config, bucket=settings.limiter_bucket
    )


@contextlib.asynccontextmanager
async def eval_llm(settings: Settings) -> AsyncIterator[EvalLlm]:
    """Configure shared.llm for the run (ConfigError when the provider cannot be used)."""
    sink = MemorySink()
    base = configure_llm(settings, sink=sink)
    limiter = None
    try:
        if base.provider.rate_limited:
            limiter = await _limiter_for(settings)
        recorder = RecordingProvider(base.provider)
        configure_llm(settings, sink=sink, limiter=limiter, provider=recorder)
        offline = base.provider.name == "offline"
        models = {t: OFFLINE_MODEL if offline else settings.model_for_tier(t) for t in TIERS}
        yield EvalLlm(
            provider=base.provider.name, recorder=recorder, sink=sink, limiter=limiter,
            models=models,
        )  # fmt: skip
    finally:
        try:
            await base.provider.aclose()
            if limiter is not None and hasattr(limiter, "aclose"):
                await limiter.aclose()
        finally:
            reset_llm()
