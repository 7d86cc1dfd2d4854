"""The per-process LLM configuration: provider, telemetry sink, default limiter, retry policy."""

from __future__ import annotations

import logging
from contextvars import ContextVar
from dataclasses import dataclass

from shared.config import Settings, build_settings
from shared.errors import ConfigError
from shared.llm.limiting import Limiter
from shared.llm.providers.base import Provider
from shared.llm.providers.offline import OfflinePlans, OfflineProvider
from shared.llm.retry import RetryPolicy
from shared.llm.telemetry import LoggingSink, TelemetrySink

log = logging.getLogger(__name__)

TIERS = ("fast", "standard", "reasoning")


@dataclass
class LLMRuntime:
    """Everything call_llm needs besides its arguments; one per process."""

    settings: Settings
    provider: Provider
    sink: TelemetrySink | None
    limiter: Limiter | None
    retry: RetryPolicy

    def model_for(self, tier: str) -> str:
        """The model id for a tier, from settings."""
        return self.settings.model_for_tier(tier)

    async def aclose(self) -> None:
        """Close the provider's connections."""
        await self.provider.aclose()


_runtime: LLMRuntime | None = None
# A service host's own runtime for the tasks it starts (several services in one process,
# as in tests and `r42 up --embedded`, each keep their provider, plans and telemetry).
_scoped: ContextVar[LLMRuntime | None] = ContextVar("r42_llm_runtime", default=None)


def _build_provider(
    settings: Settings, choice: Provider | str | None, offline_plans: OfflinePlans | None
) -> Provider:
    if choice is not None and not isinstance(choice, str):
        return choice
    name = choice or settings.llm_provider
    if name == "offline":
        return OfflineProvider(offline_plans)
    if name != "anthropic":
        raise ConfigError(f"unknown LLM provider {name!r}; expected 'anthropic' or 'offline'")
    if settings.anthropic_api_key is None or not settings.anthropic_api_key.get_secret_value():
        raise ConfigError(
            "the anthropic LLM provider needs ANTHROPIC_API_KEY (or set R42_LLM=offline)"
        )
    # The SDK loads on the first call: offline processes, and those that never call the
    # model, never pay for it.
    from shared.llm.providers.lazy import LazyAnthropicProvider

    return LazyAnthropicProvider(
        api_key=settings.anthropic_api_key.get_secret_value(),
        base_url=settings.anthropic_base_url,
        timeout=settings.llm_timeout_s,
    )


def configure_llm(
    settings: Settings,
    *,
    sink: TelemetrySink | None = None,
    limiter: Limiter | None = None,
    provider: Provider | str | None = None,
    retry: RetryPolicy | None = None,
    offline_plans: OfflinePlans | None = None,
) -> LLMRuntime:
    """Set the process-wide LLM runtime (call once at start-up); returns it.

    `offline_plans` are the calling service's stand-ins for the model, used only when the
    provider is the offline one.
    """
    global _runtime
    for tier in TIERS:
        if not settings.model_for_tier(tier):
            raise ConfigError(f"no model configured for tier {tier!r}")
    runtime = LLMRuntime(
        settings=settings,
        provider=_build_provider(settings, provider, offline_plans),
        sink=sink if sink is not None else LoggingSink(),
        limiter=limiter,
        retry=retry or RetryPolicy(),
    )
    _runtime = runtime
    log.info("llm configured: provider=%s", runtime.provider.name)
    return runtime


def use_runtime(runtime: LLMRuntime) -> None:
    """Make `runtime` the one of this context and of every task started from it."""
    _scoped.set(runtime)


def get_runtime() -> LLMRuntime:
    """This context's runtime, else the process's; configured from the environment if none."""
    scoped = _scoped.get()
    if scoped is not None:
        return scoped
    if _runtime is None:
        return configure_llm(build_settings())
    return _runtime


def reset_llm() -> None:
    """Forget the runtime (tests); the next call configures again."""
    global _runtime
    _runtime = None
