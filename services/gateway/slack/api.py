"""The Slack Web API as the gateway uses it: Block Kit checked, posts paced per channel."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from services.gateway.core.text import number
from services.gateway.slack.blocks.kit import MAX_VIEW_BLOCKS, check_blocks, truncate
from shared.errors import BadInputError, PermanentError, TransientError

log = logging.getLogger(__name__)

Blocks = list[dict[str, Any]]
_TRANSIENT_ERRORS = frozenset(
    {"ratelimited", "service_unavailable", "request_timeout", "internal_error", "fatal_error"}
)


class ChannelPacer:
    """At most one post per `interval` seconds per channel: later posts wait their turn."""

    def __init__(
        self,
        interval: float = 1.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.interval = interval
        self._clock = clock
        self._sleep = sleep
        self._next: dict[str, float] = {}

    async def wait(self, channel: str) -> None:
        """Reserve the channel's next slot, then sleep until it comes."""
        if self.interval <= 0:
            return
        now = self._clock()
        # Reserved before sleeping (no await in between), so concurrent posts queue up.
        slot = max(now, self._next.get(channel, now))
        self._next[channel] = slot + self.interval
        if len(self._next) > 10_000:
            self._next = {c: t for c, t in self._next.items() if t > now}
        if slot > now:
            await self._sleep(slot - now)


def _slack_error(method: str, exc: SlackApiError) -> Exception:
    code = str(exc.response.get("error", "unknown")) if exc.response is not None else "unknown"
    message = f"Slack {method} failed: {code}"
    return TransientError(message) if code in _TRANSIENT_ERRORS else PermanentError(message)


class SlackApi:
    """Thin wrapper over AsyncWebClient; every message is validated against Block Kit limits."""

    def __init__(self, client: AsyncWebClient, *, pace_interval: float = 1.0) -> None:
        self.client = client
        self.pacer = ChannelPacer(pace_interval)
        self._dm: dict[str, str] = {}
        self._names: dict[str, str] = {}
        if not any(isinstance(h, AsyncRateLimitErrorRetryHandler) for h in client.retry_handlers):
            client.retry_handlers.append(AsyncRateLimitErrorRetryHandler(max_retry_count=2))

    async def _call(self, method: str, **kwargs: Any) -> Any:
        try:
            return await self.client.api_call(method, json=kwargs)
        except SlackApiError as exc:
            raise _slack_error(method, exc) from None
        except (TimeoutError, OSError) as exc:
            raise TransientError(f"Slack {method} unreachable: {type(exc).__name__}") from None

    async def post(
        self, channel: str, blocks: Blocks, *, text: str, thread_ts: str | None = None
    ) -> str:
        """Post a message (paced per channel); returns its ts."""
        args: dict[str, Any] = {
            "channel": channel,
            "blocks": check_blocks(blocks),
            "text": truncate(text, 3000),
        }
        if thread_ts:
            args["thread_ts"] = thread_ts
        await self.pacer.wait(channel)
        resp = await self._call("chat.postMessage", **args)
        return str(resp["ts"])

    async def update(self, channel: str, ts: str, blocks: Blocks, *, text: str) -> None:
        """Replace a message's blocks."""
        await self._call(
            "chat.update",
            channel=channel,
            ts=ts,
            blocks=check_blocks(blocks),
            text=truncate(text, 3000),
        )

    async def delete(self, channel: str, ts: str) -> None:
        """Delete one of the bot's messages (a working indicator a streamed answer replaces)."""
        await self._call("chat.delete", channel=channel, ts=ts)

    async def ephemeral(
        self, channel: str, user: str, text: str, blocks: Blocks | None = None
    ) -> None:
        """A message only `user` sees."""
        args: dict[str, Any] = {"channel": channel, "user": user, "text": truncate(text, 3000)}
        if blocks:
            args["blocks"] = check_blocks(blocks)
        await self.pacer.wait(channel)
        await self._call("chat.postEphemeral", **args)

    async def set_status(self, channel: str, thread_ts: str, status: str) -> None:
        """The assistant thread's 'is working' line ('' clears it)."""
        await self._call(
            "assistant.threads.setStatus",
            channel_id=channel,
            thread_ts=thread_ts,
            status=truncate(status, 150),
        )

    async def set_title(self, channel: str, thread_ts: str, title: str) -> None:
        """The assistant thread's title in the history list."""
        await self._call(
            "assistant.threads.setTitle",
            channel_id=channel,
            thread_ts=thread_ts,
            title=truncate(title, 75),
        )

    async def set_prompts(
        self, channel: str, thread_ts: str, prompts: list[dict[str, str]], *, title: str
    ) -> None:
        """Suggested prompts under a new assistant thread (Slack shows at most four)."""
        await self._call(
            "assistant.threads.setSuggestedPrompts",
            channel_id=channel,
            thread_ts=thread_ts,
            prompts=prompts[:4],
            title=truncate(title, 150),
        )

    async def dm_channel(self, user: str) -> str:
        """The DM channel with a user (opened once, then cached)."""
        if user not in self._dm:
            resp = await self._call("conversations.open", users=user)
            self._dm[user] = str(resp["channel"]["id"])
        return self._dm[user]

    async def user_name(self, user: str) -> str:
        """A user's display name ('' when Slack will not say)."""
        if user not in self._names:
            try:
                resp = await self._call("users.info", user=user)
                info = resp.get("user") or {}
                profile = info.get("profile") or {}
                self._names[user] = str(
                    profile.get("display_name") or info.get("real_name") or info.get("name") or ""
                )
            except (PermanentError, TransientError) as exc:
                log.info("users.info for %s failed: %s", user, exc)
                return ""
        return self._names[user]

    async def thread_messages(
        self, channel: str, thread_ts: str, *, before_ts: str, limit: int
    ) -> list[dict[str, Any]]:
        """A thread's messages before `before_ts`, oldest first ([] when Slack will not say)."""
        try:
            # A read method: slack-sdk sends it as GET parameters (Slack takes no JSON here).
            resp = await self.client.conversations_replies(
                channel=channel, ts=thread_ts, latest=before_ts, inclusive=False, limit=limit
            )
        except SlackApiError as exc:
            log.info("conversations.replies %s/%s: %s", channel, thread_ts, _slack_error(
                "conversations.replies", exc))  # fmt: skip
            return []
        except (TimeoutError, OSError) as exc:
            log.info("conversations.replies unreachable: %s", type(exc).__name__)
            return []
        messages = resp.get("messages") or []
        return [m for m in messages if isinstance(m, dict) and _ts(m) < _ts({"ts": before_ts})]

    async def publish_home(self, user: str, view: dict[str, Any]) -> None:
        """Publish a user's App Home."""
        check_blocks(view.get("blocks", []), max_blocks=MAX_VIEW_BLOCKS)
        await self._call("views.publish", user_id=user, view=view)

    async def open_view(self, trigger_id: str, view: dict[str, Any]) -> None:
        """Open a modal."""
        check_blocks(view.get("blocks", []), max_blocks=MAX_VIEW_BLOCKS)
        await self._call("views.open", trigger_id=trigger_id, view=view)

    async def file_info(self, file_id: str) -> dict[str, Any]:
        """files.info of a shared file."""
        resp = await self._call("files.info", file=file_id)
        return dict(resp["file"])

    async def upload_png(
        self, channel: str, data: bytes, *, filename: str, title: str, thread_ts: str | None = None
    ) -> str | None:
        """Upload an image into a channel; returns its file id."""
        await self.pacer.wait(channel)
        try:
            resp = await self.client.files_upload_v2(
                channel=channel,
                content=data,
                filename=filename,
                title=title,
                thread_ts=thread_ts,
            )
        except SlackApiError as exc:
            raise _slack_error("files.upload", exc) from None
        files = resp.get("files") or [resp.get("file") or {}]
        return str(files[0].get("id")) if files and files[0].get("id") else None

    async def download(self, url: str, *, max_bytes: int) -> bytes:
        """A private file's bytes (bot token auth); BadInputError beyond max_bytes."""
        token = self.client.token or ""
        headers = {"Authorization": f"Bearer {token}"}
        try:
            async with httpx2.AsyncClient(timeout=30.0, follow_redirects=True) as http:
                async with http.stream("GET", url, headers=headers) as resp:
                    if resp.status_code != 200:
                        raise PermanentError(f"download failed: HTTP {resp.status_code}")
                    chunks: list[bytes] = []
                    size = 0
                    async for chunk in resp.aiter_bytes():
                        size += len(chunk)
                        if size > max_bytes:
                            limit = number(max_bytes)
                            raise BadInputError(f"het bestand is groter dan {limit} bytes")
                        chunks.append(chunk)
        except httpx2.HTTPError as exc:
            raise TransientError(f"download failed: {type(exc).__name__}") from None
        return b"".join(chunks)


def _ts(message: dict[str, Any]) -> float:
    try:
        return float(message.get("ts") or 0)
    except (TypeError, ValueError):
        return 0.0
