"""Bus → Teams: thin subscribers for the answer events the Teams surface turns into cards.

Events requested elsewhere (reply_to.via is not `teams`) are acked and skipped; source
events are matched to Teams uploads by their source id.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from faststream.nats import NatsBroker

from services.gateway.teams import flows_learn, uploads
from services.gateway.teams.surface import VIA, TeamsGateway
from shared.bus import (
    ContentReady,
    Event,
    QuizReady,
    QuizScored,
    SourceCompleted,
    SourceFailed,
    SourceProgress,
    subscribe_event,
)

log = logging.getLogger(__name__)

Getter = Callable[[], TeamsGateway]


def for_teams(event: Any) -> bool:
    """Whether an answer event was requested through Teams."""
    reply_to = getattr(event, "reply_to", None) or {}
    return isinstance(reply_to, dict) and reply_to.get("via") == VIA


def register_handlers(broker: NatsBroker, gateway: Getter, *, namespace: str = "") -> None:
    """Subscribe the Teams consumers (before the broker starts)."""

    def routed(
        flow: Callable[[TeamsGateway, Any], Awaitable[None]], *, needs_reply_to: bool = True
    ) -> Callable[[Any], Awaitable[None]]:
        async def handle(event: Event) -> None:
            if needs_reply_to and not for_teams(event):
                return
            await flow(gateway(), event)

        return handle

    subs: list[tuple[type[Event], str, Callable[[Any], Awaitable[None]]]] = [
        (ContentReady, "teams-content-ready", routed(flows_learn.on_content_ready)),
        (QuizReady, "teams-quiz-ready", routed(flows_learn.on_quiz_ready)),
        (QuizScored, "teams-quiz-scored", routed(flows_learn.on_quiz_scored)),
        (
            SourceProgress,
            "teams-source-progress",
            routed(uploads.on_source_event, needs_reply_to=False),
        ),
        (
            SourceCompleted,
            "teams-source-completed",
            routed(uploads.on_source_event, needs_reply_to=False),
        ),
        (
            SourceFailed,
            "teams-source-failed",
            routed(uploads.on_source_event, needs_reply_to=False),
        ),
    ]
    for cls, durable, handler in subs:
        subscribe_event(
            broker, cls, durable=durable, handler=handler, namespace=namespace,
            actor="gateway", max_deliver=5, nack_delay=1.0,
        )  # fmt: skip
