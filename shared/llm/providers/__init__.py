"""LLM backends: the Anthropic Messages API and the deterministic offline provider."""

from shared.llm.providers.base import Provider, ProviderReply, ProviderRequest
from shared.llm.providers.offline import (
    OFFLINE_MODEL,
    OFFLINE_PREFIX,
    OfflineHandler,
    OfflinePlans,
    OfflineProvider,
    OfflineRequest,
    OfflineStep,
    OfflineTurn,
)

__all__ = [
    "OFFLINE_MODEL",
    "OFFLINE_PREFIX",
    "OfflineHandler",
    "OfflinePlans",
    "OfflineProvider",
    "OfflineRequest",
    "OfflineStep",
    "OfflineTurn",
    "Provider",
    "ProviderReply",
    "ProviderRequest",
]
