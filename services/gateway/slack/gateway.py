"""What every Slack listener, flow and bus handler shares: the client, the Web API, dedupe.

Every flow runs after the request was acked (see listeners/); the reply_to dicts on bus
events carry where to answer: {"via": "slack", "channel", "ts", "thread_ts", "user"}.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from services.gateway.core import GatewayClient
from services.gateway.core.background import Background
from services.gateway.slack.api import Blocks, SlackApi
from services.gateway.slack.blocks.kit import notice_blocks
from services.gateway.slack.dedupe import Deduper

VIA = "slack"

Update = Callable[[Blocks, str], Coroutine[Any, Any, None]]
Private = Callable[[str], Coroutine[Any, Any, None]]


@dataclass(frozen=True)
class Reply:
    """How to answer an interaction: replace the clicked message, or tell the clicker privately."""

    update: Update
    private: Private


@dataclass
class SlackGateway:
    """The Slack side's shared state."""

    client: GatewayClient
    api: SlackApi
    deduper: Deduper
    admin_channel: str | None = None
    background: Background = field(default_factory=Background)

    def reply_to(
        self,
        *,
        channel: str,
        user: str,
        ts: str | None = None,
        thread_ts: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """Routing data for an answer event that must come back to this message."""
        data = {"via": VIA, "channel": channel, "user": user, **extra}
        if ts:
            data["ts"] = ts
        if thread_ts:
            data["thread_ts"] = thread_ts
        return data

    async def notify(self, channel: str, text: str, *, thread_ts: str | None = None) -> None:
        """Post a short notice (mrkdwn)."""
        await self.api.post(channel, notice_blocks(text), text=text, thread_ts=thread_ts)
