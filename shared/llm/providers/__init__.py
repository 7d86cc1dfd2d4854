"""LLM backends: the Anthropic Messages API and the deterministic offline provider."""

from shared.llm.providers.base import Provider, ProviderReply, ProviderRequest
from shared.llm.providers.offline import (
    OFFLINE_MODEL,
    OFFLINE_PREFIX,
    OfflineProvider,
    OfflineRequest,
    register_offline_handler,
    unregister_offline_handler,
)

__all__ = [
    "OFFLINE_MODEL",
    "OFFLINE_PREFIX",
    "OfflineProvider",
    "OfflineRequest",
    "Provider",
    "ProviderReply",
    "ProviderRequest",
    "register_offline_handler",
    "unregister_offline_handler",
]
