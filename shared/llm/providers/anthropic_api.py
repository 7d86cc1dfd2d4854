"""The Anthropic provider: one SDK attempt per call (SDK retries off), errors mapped, no key.

`stream` uses the SDK's `messages.stream` helper: text deltas go to the sink as they arrive and
the SDK's accumulated final message becomes the reply. An `error` event inside a stream (the
HTTP status was already 200) is mapped to the status its error type stands for.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anthropic

from shared.llm.errors import LLMConnectionError, LLMHttpError
from shared.llm.providers.base import ProviderReply, ProviderRequest
from shared.llm.result import Usage
from shared.llm.retry import parse_retry_after

_COUNTED = ("model", "messages", "system", "tools", "tool_choice")  # count_tokens' fields
_SPEND_LIMIT_MARK = "spend_limit_reached"  # enforced_/contract_/linked_organization_…
# The HTTP status each error type is sent with; inside a stream the status is already 200.
_ERROR_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}


class AnthropicProvider:
    """Talks to the Messages API (or anything speaking it at `base_url`) via AsyncAnthropic."""

    name = "anthropic"
    rate_limited = True

    def __init__(self, *, api_key: str, base_url: str | None = None, timeout: float = 60.0) -> None:
        self._api_key = api_key
        self._base_url = base_url
        self._timeout = timeout
        # httpx2 connections belong to the loop that opened them: one client per running loop.
        self._client: anthropic.AsyncAnthropic | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def __repr__(self) -> str:
        return f"AnthropicProvider(base_url={self._base_url!r})"

    def client(self) -> anthropic.AsyncAnthropic:
        """The SDK client for the running event loop, created on first use."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = anthropic.AsyncAnthropic(
                api_key=self._api_key,
                base_url=self._base_url,
                max_retries=0,
                timeout=self._timeout,
            )
            self._loop = loop
        return self._client

    async def create(self, request: ProviderRequest) -> ProviderReply:
        """Send one request; map SDK errors to LLMHttpError / LLMConnectionError."""
        client = self.client()
        try:
            raw = await client.messages.with_raw_response.create(
                **request.params, timeout=request.timeout
            )
        except anthropic.APIError as exc:
            raise self._mapped(exc, request) from None
        response = raw.http_response
        data = response.json()
        return _reply(data, response.headers, request)

    async def count_tokens(self, body: Mapping[str, Any], *, timeout: float) -> int:  # noqa: ASYNC109
        """Input tokens of a request body (`POST /v1/messages/count_tokens`)."""
        client = self.client()
        wanted = {k: body[k] for k in _COUNTED if k in body}
        try:
            counted = await client.messages.count_tokens(**wanted, timeout=timeout)
        except anthropic.APIError as exc:
            raise self._mapped(exc, ProviderRequest(params=dict(body), timeout=timeout)) from None
        return int(counted.input_tokens)

    async def stream(
        self, request: ProviderRequest, on_text: Callable[[str], Awaitable[None]]
    ) -> ProviderReply:
        """Stream one request: text deltas to `on_text`, then the accumulated final message."""
        client = self.client()
        try:
            async with client.messages.stream(**request.params, timeout=request.timeout) as stream:
                async for event in stream:
                    if event.type == "text":
                        await on_text(event.text)
                message = await stream.get_final_message()
                headers = stream.response.headers
        except anthropic.APIError as exc:
            raise self._mapped(exc, request) from None
        return _reply(message.to_dict(mode="json"), headers, request)

    def _mapped(self, exc: anthropic.APIError, request: ProviderRequest) -> LLMHttpError:
        """Our error for an SDK error (no secrets, the status it stands for)."""
        if isinstance(exc, anthropic.APITimeoutError):
            return LLMConnectionError(
                f"Anthropic API request timed out after {request.timeout:g}s", timed_out=True
            )
        if isinstance(exc, anthropic.APIConnectionError):
            cause = exc.__cause__
            detail = f": {type(cause).__name__}" if cause is not None else ""
            return LLMConnectionError(f"could not reach the Anthropic API{detail}")
        if isinstance(exc, anthropic.APIStatusError):
            return self._status_error(exc)
        return LLMHttpError(f"unexpected Anthropic API error: {type(exc).__name__}", status=None)

    def _status_error(self, exc: anthropic.APIStatusError) -> LLMHttpError:
        body = _scrub(exc.body, self._api_key)
        status = exc.status_code
        if status < 400:  # an `error` event inside a stream that had started with 200
            status = _ERROR_TYPE_STATUS.get(str(exc.type or ""), 500)
        retry_after = parse_retry_after(exc.response.headers)
        spend_limit = status == 429 and _SPEND_LIMIT_MARK in json.dumps(body, default=str)
        api_message = _scrub(exc.api_message or "", self._api_key)
        parts = [f"Anthropic API error {status}"]
        if exc.type:
            parts.append(f"({exc.type})")
        message = " ".join(parts) + (f": {api_message}" if api_message else "")
        if spend_limit:
            message += " [spend limit reached: not retried]"
        if retry_after is not None:
            message += f" [retry-after {retry_after:g}s]"
        if exc.request_id:
            message += f" [request-id {exc.request_id}]"
        return LLMHttpError(
            message,
            status=status,
            request_id=exc.request_id,
            body=body,
            error_type=exc.type,
            retry_after=retry_after,
            spend_limit=spend_limit,
        )

    async def aclose(self) -> None:
        """Close the SDK client if it belongs to the running loop."""
        client, self._client = self._client, None
        if client is not None:
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is self._loop:
                await client.close()
        self._loop = None


def _reply(data: dict[str, Any], headers: Any, request: ProviderRequest) -> ProviderReply:
    """A ProviderReply from a Messages API message (as JSON) and its response headers."""
    usage = data.get("usage") or {}
    return ProviderReply(
        content=data.get("content") or [],
        stop_reason=data.get("stop_reason"),
        usage=Usage(
            input_tokens=usage.get("input_tokens") or 0,
            output_tokens=usage.get("output_tokens") or 0,
            cache_creation_input_tokens=usage.get("cache_creation_input_tokens") or 0,
            cache_read_input_tokens=usage.get("cache_read_input_tokens") or 0,
        ),
        model=data.get("model") or request.params["model"],
        request_id=headers.get("request-id"),
        ratelimit={k: v for k, v in headers.items() if k.startswith("anthropic-ratelimit-")},
    )


def _scrub(value: Any, secret: str) -> Any:
    """Replace the API key wherever an error body might echo it."""
    if not secret:
        return value
    if isinstance(value, str):
        return value.replace(secret, "***")
    if isinstance(value, dict):
        return {k: _scrub(v, secret) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v, secret) for v in value]
    return value
