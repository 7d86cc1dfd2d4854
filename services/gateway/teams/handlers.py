"""Bus → Teams: thin subscribers for the answer events the Teams surface turns into cards.

Events requested elsewhere (reply_to.via is not `teams`) are acked and skipped; source
events are matched to Teams uploads by their source id.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

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
)
from shared.runtime.service import Subscription

log = logging.getLogger(__name__)

Getter = Callable[[], TeamsGateway]


def for_teams(event: Any) -> bool:
    """Whether an answer event was requested through Teams."""
    reply_to = getattr(event, "reply_to", None) or {}
    return isinstance(reply_to, dict) and reply_to.get("via") == VIA


def teams_subscriptions(gateway: Getter) -> list[Subscription]:
    """The Teams-posting durable consumers (shared by gateway replicas)."""

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
    return [
        Subscription(event=cls, durable=durable, handler=handler, max_deliver=5, nack_delay=1.0)
        for cls, durable, handler in subs
    ]
