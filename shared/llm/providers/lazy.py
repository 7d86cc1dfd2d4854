"""The Anthropic provider with its SDK imported on the first call, not at start-up.

Importing the SDK (and httpx2 behind it) costs a process ~60 MB of RSS (measured: 25 → 87
MB). Every service builds an LLM runtime at start, but some never call the model (telemetry)
and others only now and then, so the SDK loads where it is used.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from shared.llm.providers.base import ProviderReply, ProviderRequest

if TYPE_CHECKING:
    from shared.llm.providers.anthropic_api import AnthropicProvider

SDK_MODULE = "shared.llm.providers.anthropic_api"


class LazyAnthropicProvider:
    """AnthropicProvider, built (SDK import included) on the first request."""

    name = "anthropic"
    rate_limited = True

    def __init__(self, *, api_key: str, base_url: str | None = None, timeout: float = 60.0) -> None:
        self._api_key = api_key
        self._base_url = base_url
        self._timeout = timeout
        self._provider: AnthropicProvider | None = None
        self._loading = asyncio.Lock()

    def __repr__(self) -> str:
        return f"LazyAnthropicProvider(base_url={self._base_url!r})"

    def provider(self) -> AnthropicProvider:
        """The real provider (importing the SDK here, in the caller's thread, on first use)."""
        if self._provider is None:
            from shared.llm.providers.anthropic_api import AnthropicProvider

            self._provider = AnthropicProvider(
                api_key=self._api_key, base_url=self._base_url, timeout=self._timeout
            )
        return self._provider

    async def _loaded(self) -> AnthropicProvider:
        """The real provider, its SDK imported in a worker thread on first use.

        The import is ~1 s of CPU (seconds on a loaded machine); on the event loop it would
        freeze the process meanwhile: rpc answers, JetStream heartbeats and NATS flushes wait.
        """
        if self._provider is None:
            async with self._loading:
                if self._provider is None:
                    await asyncio.to_thread(importlib.import_module, SDK_MODULE)
        return self.provider()

    async def create(self, request: ProviderRequest) -> ProviderReply:
        """One attempt through the real provider."""
        return await (await self._loaded()).create(request)

    async def count_tokens(self, body: Mapping[str, Any], *, timeout: float) -> int:  # noqa: ASYNC109
        """Input tokens of a request body, through the real provider."""
        return await (await self._loaded()).count_tokens(body, timeout=timeout)

    async def stream(
        self, request: ProviderRequest, on_text: Callable[[str], Awaitable[None]]
    ) -> ProviderReply:
        """One streamed attempt through the real provider."""
        return await (await self._loaded()).stream(request, on_text)

    async def aclose(self) -> None:
        """Release the real provider's connections (nothing when it was never used)."""
        if self._provider is not None:
            await self._provider.aclose()
