"""A fake Anthropic Messages API: a real aiohttp server on 127.0.0.1 that scripts and records.

Usage::

    with FakeAnthropic() as fake:
        fake.enqueue(rate_limited(retry_after=2), tool_reply("save", {"x": 1}))
        ...  # point ANTHROPIC_BASE_URL (or configure_llm) at fake.url
        assert len(fake.requests) == 2

Replies come from the FIFO queue first, then from `fake.default(request_json)` when set, else
a plain "ok" text message. A request with `"stream": true` is answered as server-sent events
exactly as the Messages API streams (message_start, content_block_start / _delta / _stop with
text_delta and input_json_delta, ping, message_delta with usage, message_stop; an `error`
event mid-stream); `first_token_delay`, `delta_delay` and `stream_error` script its timing and
failures. `fake.rate_limit(rpm=N)` answers 429 with a correct retry-after
once N requests were admitted in the window. Every request is recorded (arrival times, headers,
JSON body, the status answered); nothing is logged, so the API key never reaches a log.

Prompt caching and token counts follow the API (tests/fakes/anthropic_cache.py): `usage`
reports cache_creation_input_tokens / cache_read_input_tokens for identical prefixes at or
above the model's minimum, with a 5-minute TTL (`fake.cache.clock` can be moved on), and
`POST /v1/messages/count_tokens` answers `{"input_tokens": N}` (recorded in `fake.counts`,
not in `fake.requests`). A scripted `usage` still wins over the computed one.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from email.utils import format_datetime
from typing import Any

from aiohttp import web

from tests.fakes.anthropic_cache import CacheRequestError, PromptCache, count_tokens, prefix_blocks


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a message (status 200) or an error body, with headers and a delay."""

    status: int = 200
    content: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = "end_turn"
    usage: dict[str, int] | None = None
    error: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    model: str | None = None
    # Streaming only: seconds from message_start to the first content delta, between deltas,
    # and an `error` event (`{"type": ..., "message": ...}`) sent after `stream_error_after`
    # deltas instead of the rest of the message.
    first_token_delay: float = 0.0
    delta_delay: float = 0.0
    stream_error: dict[str, Any] | None = None
    stream_error_after: int = 0


def text_reply(text: str, *, stop_reason: str = "end_turn", **kw: Any) -> Reply:
    """An assistant message with one text block."""
    return Reply(content=[{"type": "text", "text": text}], stop_reason=stop_reason, **kw)


def tool_reply(
    name: str,
    tool_input: Any,
    *,
    tool_id: str | None = None,
    text: str | None = None,
    stop_reason: str = "tool_use",
    **kw: Any,
) -> Reply:
    """An assistant message calling a tool (optionally with text before it)."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks.append(
        {"type": "tool_use", "id": tool_id or "toolu_fake", "name": name, "input": tool_input}
    )
    return Reply(content=blocks, stop_reason=stop_reason, **kw)


def error_reply(
    status: int,
    error_type: str,
    message: str,
    *,
    error_code: str | None = None,
    headers: dict[str, str] | None = None,
    delay: float = 0.0,
) -> Reply:
    """An API error: `{"type": "error", "error": {"type": ..., "message": ...}}`."""
    error: dict[str, Any] = {"type": error_type, "message": message}
    if error_code is not None:
        error["details"] = {"error_code": error_code}
    return Reply(status=status, error=error, headers=headers or {}, delay=delay)


def rate_limited(
    retry_after: float | None = 1, *, http_date: bool = False, spend_limit: bool = False
) -> Reply:
    """A 429; retry-after in seconds or as an HTTP date; optionally the spend-limit variant."""
    headers: dict[str, str] = {}
    if retry_after is not None:
        if http_date:
            when = datetime.fromtimestamp(time.time() + retry_after, UTC)
            headers["retry-after"] = format_datetime(when, usegmt=True)
        else:
            headers["retry-after"] = f"{retry_after:g}"
    if spend_limit:
        return error_reply(
            429,
            "rate_limit_error",
            "You have reached your specified API usage limits.",
            error_code="enforced_spend_limit_reached",
            headers=headers,
        )
    return error_reply(429, "rate_limit_error", "Number of requests exceeded.", headers=headers)


def overloaded() -> Reply:
    """A 529 overloaded_error."""
    return error_reply(529, "overloaded_error", "Overloaded")


def server_error(status: int = 500) -> Reply:
    """A 5xx api_error."""
    return error_reply(status, "api_error", "Internal server error")


def stream_broken(reply: Reply, *, after: int, error_type: str = "overloaded_error") -> Reply:
    """The same reply streamed, but an `error` event replaces it after `after` deltas."""
    messages = {"overloaded_error": "Overloaded", "api_error": "Internal server error"}
    error = {"type": error_type, "message": messages.get(error_type, error_type)}
    return replace(reply, stream_error=error, stream_error_after=after)


def slow(reply: Reply, seconds: float) -> Reply:
    """The same reply, sent after a delay (longer than the client timeout → client times out)."""
    return replace(reply, delay=seconds)


@dataclass
class RecordedRequest:
    """What the fake received."""

    monotonic: float
    wall: float
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any
    status: int | None = None


class FakeAnthropic:
    """The server; use as a context manager (start/stop) and script it from any thread."""

    def __init__(self) -> None:
        self.default: Callable[[Any], Reply] | None = None
        self.url = ""
        self._lock = threading.Lock()
        self._queue: collections.deque[Reply] = collections.deque()
        self._requests: list[RecordedRequest] = []
        self._counts: list[RecordedRequest] = []
        self.cache = PromptCache()
        self.count_error: Reply | None = None  # answer count_tokens with this error instead
        self._ids = itertools.count(1)
        self._rpm: int | None = None
        self._window_s = 60.0
        self._sliding = True
        self._precise = False
        self._admitted: collections.deque[float] = collections.deque()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None

    # -- scripting ------------------------------------------------------------------------

    def enqueue(self, *replies: Reply) -> None:
        """Append scripted replies, answered in order."""
        with self._lock:
            self._queue.extend(replies)

    def rate_limit(
        self,
        rpm: int | None,
        *,
        window_s: float = 60.0,
        sliding: bool = True,
        precise: bool = False,
    ) -> None:
        """Admit at most `rpm` requests per window (sliding or fixed); None turns it off.

        The 429 carries `retry-after` in whole seconds (rounded up, as the API does); with
        `precise` also `retry-after-ms`, for benchmarks that use sub-second windows.
        """
        with self._lock:
            self._rpm, self._window_s, self._sliding = rpm, window_s, sliding
            self._precise = precise
            self._admitted.clear()

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the recorded requests, in arrival order."""
        with self._lock:
            return list(self._requests)

    @property
    def counts(self) -> list[RecordedRequest]:
        """The recorded count_tokens requests, in arrival order."""
        with self._lock:
            return list(self._counts)

    @property
    def pending(self) -> int:
        """Scripted replies not yet used."""
        with self._lock:
            return len(self._queue)

    def clear(self) -> None:
        """Forget recorded requests and scripted replies."""
        with self._lock:
            self._requests.clear()
            self._counts.clear()
            self._queue.clear()
        self.cache.clear()

    # -- lifecycle ------------------------------------------------------------------------

    def start(self) -> FakeAnthropic:
        """Serve on a free loopback port in a background thread; return when it accepts."""
        self._thread = threading.Thread(target=self._serve, name="fake-anthropic", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake Anthropic server did not start within 10 s")
        if self._startup_error is not None:
            raise RuntimeError("fake Anthropic server failed to start") from self._startup_error
        return self

    def stop(self) -> None:
        """Stop serving and join the thread."""
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        self._thread = None

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _serve(self) -> None:
        loop = self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            app = web.Application(client_max_size=32 * 1024 * 1024)
            app.router.add_post("/v1/messages", self._handle)
            app.router.add_post("/v1/messages/count_tokens", self._count)
            self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.1)
            loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, "127.0.0.1", 0, backlog=512)
            loop.run_until_complete(site.start())
            host, port = self._runner.addresses[0][:2]
            self.url = f"http://{host}:{port}"
        except BaseException as exc:  # surfaced by start()
            self._startup_error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(self._runner.cleanup())
            # Handlers still sleeping on a scripted delay: cancel them so nothing dangles.
            pending = asyncio.all_tasks(loop)
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()

    # -- serving --------------------------------------------------------------------------

    async def _count(self, request: web.Request) -> web.Response:
        record = await self._record(request)
        with self._lock:
            self._counts.append(record)
        body = record.body
        headers = {"request-id": f"req_fake_{next(self._ids):06d}"}
        problem: Reply | None = None
        if not (request.headers.get("x-api-key") or request.headers.get("authorization")):
            problem = error_reply(401, "authentication_error", "x-api-key header is required")
        elif self.count_error is not None:
            problem = self.count_error
        elif not isinstance(body, dict) or "model" not in body:
            problem = error_reply(400, "invalid_request_error", "model: Field required")
        elif not body.get("messages"):
            problem = error_reply(400, "invalid_request_error", "messages: Field required")
        elif "max_tokens" in body:
            problem = error_reply(
                400, "invalid_request_error", "max_tokens: Extra inputs are not permitted"
            )
        if problem is None:
            try:
                tokens = count_tokens(body)
            except CacheRequestError as exc:
                problem = error_reply(400, "invalid_request_error", str(exc))
        record.status = problem.status if problem is not None else 200
        if problem is not None:
            payload = {"type": "error", "error": problem.error}
            return web.json_response(payload, status=problem.status, headers=headers)
        return web.json_response({"input_tokens": tokens}, headers=headers)

    async def _record(self, request: web.Request) -> RecordedRequest:
        record = RecordedRequest(
            monotonic=time.monotonic(),
            wall=time.time(),
            method=request.method,
            path=request.path,
            headers={k.lower(): v for k, v in request.headers.items()},
            body=None,
        )
        raw = await request.read()
        try:
            record.body = json.loads(raw)
        except ValueError:
            record.body = raw.decode("utf-8", "replace")
        return record

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        record = await self._record(request)
        with self._lock:
            self._requests.append(record)
            chosen = self._choose(request, record.body)
        # The default responder runs outside the lock: it may script the fake itself.
        default = self.default
        if chosen is not None:
            reply = chosen
        elif default is not None:
            reply = default(record.body)
        else:
            reply = text_reply("ok")
        record.status = reply.status
        if reply.delay:
            await asyncio.sleep(reply.delay)
        # Errors are plain JSON even for a streaming request: the API refuses before streaming.
        if isinstance(record.body, dict) and record.body.get("stream") is True:
            if reply.error is None and reply.status < 400:
                return await self._stream(request, reply, record.body)
        return self._respond(reply, record.body)

    def _choose(self, request: web.Request, body: Any) -> Reply | None:
        # Called under the lock; None means "ask the default responder".
        if not (request.headers.get("x-api-key") or request.headers.get("authorization")):
            return error_reply(401, "authentication_error", "x-api-key header is required")
        if not isinstance(body, dict) or not all(k in body for k in ("model", "max_tokens")):
            return error_reply(400, "invalid_request_error", "model and max_tokens are required")
        if not body.get("messages"):
            return error_reply(400, "invalid_request_error", "messages: at least one message")
        if not isinstance(body.get("stream", False), bool):
            return error_reply(400, "invalid_request_error", "stream: Input should be a boolean")
        try:
            prefix_blocks(body)
        except CacheRequestError as exc:
            return error_reply(400, "invalid_request_error", str(exc))
        limited = self._rate_limited()
        if limited is not None:
            return limited
        if self._queue:
            return self._queue.popleft()
        return None

    def _rate_limited(self) -> Reply | None:
        if self._rpm is None:
            return None
        now = time.monotonic()
        if self._sliding:
            while self._admitted and self._admitted[0] <= now - self._window_s:
                self._admitted.popleft()
            free_at = self._admitted[0] + self._window_s if self._admitted else now
        else:
            start = math.floor(now / self._window_s) * self._window_s
            while self._admitted and self._admitted[0] < start:
                self._admitted.popleft()
            free_at = start + self._window_s
        if len(self._admitted) < self._rpm:
            self._admitted.append(now)
            return None
        wait = max(math.ceil(free_at - now), 1)
        reply = rate_limited(retry_after=wait)
        headers = {
            **reply.headers,
            **({"retry-after-ms": str(math.ceil((free_at - now) * 1000))} if self._precise else {}),
            "anthropic-ratelimit-requests-limit": str(self._rpm),
            "anthropic-ratelimit-requests-remaining": "0",
            "anthropic-ratelimit-requests-reset": datetime.fromtimestamp(
                time.time() + (free_at - now), UTC
            ).isoformat(timespec="seconds"),
        }
        return replace(reply, headers=headers)

    def _respond(self, reply: Reply, body: Any) -> web.Response:
        n = next(self._ids)
        headers = {"request-id": f"req_fake_{n:06d}", **reply.headers}
        if reply.error is not None or reply.status >= 400:
            error = reply.error or {"type": "api_error", "message": f"status {reply.status}"}
            payload: dict[str, Any] = {"type": "error", "error": error}
            return web.json_response(payload, status=reply.status, headers=headers)
        message = _message(n, reply, body, content=reply.content, stop_reason=reply.stop_reason,
                           cache=self.cache)  # fmt: skip
        return web.json_response(message, status=reply.status, headers=headers)

    async def _stream(self, request: web.Request, reply: Reply, body: Any) -> web.StreamResponse:
        n = next(self._ids)
        headers = {
            "request-id": f"req_fake_{n:06d}",
            "content-type": "text/event-stream; charset=utf-8",
            "cache-control": "no-cache",
            **reply.headers,
        }
        response = web.StreamResponse(status=200, headers=headers)
        await response.prepare(request)

        async def send(event: str, data: dict[str, Any]) -> None:
            line = json.dumps(data, separators=(",", ":"))
            await response.write(f"event: {event}\ndata: {line}\n\n".encode())

        final = _message(n, reply, body, content=reply.content, stop_reason=reply.stop_reason,
                         cache=self.cache)  # fmt: skip
        usage = final["usage"]
        start_usage = {**usage, "output_tokens": 1}
        skeleton = {**final, "content": [], "stop_reason": None, "usage": start_usage}
        await send("message_start", {"type": "message_start", "message": skeleton})
        deltas = 0
        for index, block in enumerate(reply.content):
            start, pieces = _stream_pieces(block)
            await send("content_block_start", {
                "type": "content_block_start", "index": index, "content_block": start,
            })  # fmt: skip
            if index == 0:
                await send("ping", {"type": "ping"})
            for delta in pieces:
                if reply.stream_error is not None and deltas >= reply.stream_error_after:
                    await send("error", {"type": "error", "error": reply.stream_error})
                    await response.write_eof()
                    return response
                await asyncio.sleep(reply.first_token_delay if deltas == 0 else reply.delta_delay)
                await send("content_block_delta", {
                    "type": "content_block_delta", "index": index, "delta": delta,
                })  # fmt: skip
                deltas += 1
            await send("content_block_stop", {"type": "content_block_stop", "index": index})
        if reply.stream_error is not None:
            await send("error", {"type": "error", "error": reply.stream_error})
            await response.write_eof()
            return response
        await send("message_delta", {
            "type": "message_delta",
            "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
            "usage": usage,
        })  # fmt: skip
        await send("message_stop", {"type": "message_stop"})
        await response.write_eof()
        return response


def _message(
    n: int,
    reply: Reply,
    body: Any,
    *,
    content: list[dict[str, Any]],
    stop_reason: str | None,
    cache: PromptCache,
) -> dict[str, Any]:
    """A Messages API `message` object; usage from the fake tokenizer and cache (or scripted)."""
    usage = {
        **cache.usage(body),
        "output_tokens": max(len(json.dumps(content)) // 4, 1),
        **(reply.usage or {}),
    }
    return {
        "id": f"msg_fake_{n:06d}",
        "type": "message",
        "role": "assistant",
        "model": reply.model or body.get("model", "claude-fake"),
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage,
    }


_WORDS = re.compile(r"\s*\S+\s*|\s+")


def _stream_pieces(block: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A content block's `content_block_start` body and its deltas, as the API splits them."""
    if block.get("type") == "tool_use":
        start: dict[str, Any] = {
            "type": "tool_use",
            "id": block.get("id"),
            "name": block.get("name"),
        }
        start["input"] = {}
        raw = json.dumps(block.get("input"))
        parts = [""] + [raw[i : i + 8] for i in range(0, len(raw), 8)]
        return start, [{"type": "input_json_delta", "partial_json": p} for p in parts]
    text = str(block.get("text", ""))
    words = _WORDS.findall(text) or [text]
    return {"type": "text", "text": ""}, [{"type": "text_delta", "text": w} for w in words]
