"""Streaming for `call_llm`: text deltas go to a sink as the model writes them.

The reply is checked exactly as a non-streamed one once the final message is complete (tool
inputs validated, `max_tokens` on a structured call refused, usage and cost from the final
message). Retries happen only before the first text reached the sink: once a person has read
words, a repeated attempt would show them twice, so a failure after that raises
`LLMStreamInterruptedError`, which is never retried.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, runtime_checkable

from shared.errors import TransientError
from shared.llm.errors import LLMError, LLMHttpError
from shared.llm.providers.base import Provider, ProviderReply, ProviderRequest

TextSink = Callable[[str], Awaitable[None]]
"""Receives each piece of answer text, in order, as soon as the model produced it."""


class LLMStreamInterruptedError(LLMError, TransientError):
    """The stream failed after text was shown; not retried (the text would repeat)."""

    def __init__(self, message: str, *, cause: LLMHttpError) -> None:
        super().__init__(message)
        self.status = cause.status
        self.request_id = cause.request_id


@runtime_checkable
class StreamingProvider(Protocol):
    """A provider that can stream one attempt (`Provider.create` plus `stream`)."""

    async def stream(self, request: ProviderRequest, on_text: TextSink) -> ProviderReply:
        """Make one streamed attempt: each text delta to `on_text`, then the final message."""
        ...


class Emitter:
    """Wraps the caller's sink and remembers whether any text reached it."""

    def __init__(self, sink: TextSink) -> None:
        self._sink = sink
        self.emitted = False

    async def __call__(self, text: str) -> None:
        """Pass one non-empty piece on."""
        if not text:
            return
        self.emitted = True
        await self._sink(text)


async def stream_attempt(
    provider: Provider, request: ProviderRequest, emitter: Emitter
) -> ProviderReply:
    """One attempt through the provider's stream, or its create with the text in one piece."""
    if isinstance(provider, StreamingProvider):
        return await provider.stream(request, emitter)
    reply = await provider.create(request)
    await emitter("".join(str(b.get("text", "")) for b in reply.content if b.get("type") == "text"))
    return reply


def interrupted(exc: LLMHttpError, *, task: str) -> LLMStreamInterruptedError:
    """The error for a stream that broke after its first text."""
    return LLMStreamInterruptedError(
        f"the answer stream of task {task!r} broke after its first text and is not retried: {exc}",
        cause=exc,
    )
