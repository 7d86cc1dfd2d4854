"""Bus → Slack: thin subscribers for the answer events the gateway turns into messages.

Each durable consumer is shared by gateway replicas. Events for other adapters (the
console's reply_to says `via: console`) are acked and skipped. Slack failures that may
pass (rate limits, timeouts) are TransientError: the consumer redelivers them later.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from services.gateway.slack.flows import learn, quiz, reviews, uploads
from services.gateway.slack.gateway import VIA, SlackGateway
from shared.bus import (
    ContentReady,
    Event,
    KbDeltaApplied,
    QuizReady,
    QuizScored,
    SourceCompleted,
    SourceFailed,
    SourceProgress,
)
from shared.runtime.service import Subscription

log = logging.getLogger(__name__)

Getter = Callable[[], SlackGateway | None]


def for_slack(event: Any) -> bool:
    """Whether an answer event was requested through Slack."""
    reply_to = getattr(event, "reply_to", None) or {}
    return isinstance(reply_to, dict) and reply_to.get("via") == VIA


def slack_subscriptions(gateway: Getter) -> list[Subscription]:
    """The Slack-posting durable consumers (shared by gateway replicas)."""

    def routed(
        flow: Callable[[SlackGateway, Any], Awaitable[None]], *, needs_reply_to: bool = True
    ) -> Callable[[Any], Awaitable[None]]:
        async def handle(event: Event) -> None:
            gw = gateway()
            if gw is None:
                log.debug("Slack not connected; skipping %s", event.subject)
                return
            if needs_reply_to and not for_slack(event):
                return
            await flow(gw, event)

        return handle

    subs: list[tuple[type[Event], str, Callable[[Any], Awaitable[None]]]] = [
        (ContentReady, "gateway-content-ready", routed(learn.on_content_ready)),
        (QuizReady, "gateway-quiz-ready", routed(quiz.on_quiz_ready)),
        (QuizScored, "gateway-quiz-scored", routed(quiz.on_quiz_scored)),
        (
            KbDeltaApplied,
            "gateway-delta-applied",
            routed(reviews.on_delta_applied, needs_reply_to=False),
        ),
        (
            SourceProgress,
            "gateway-source-progress",
            routed(uploads.on_source_event, needs_reply_to=False),
        ),
        (
            SourceCompleted,
            "gateway-source-completed",
            routed(uploads.on_source_event, needs_reply_to=False),
        ),
        (
            SourceFailed,
            "gateway-source-failed",
            routed(uploads.on_source_event, needs_reply_to=False),
        ),
    ]
    return [
        Subscription(cls, durable, handler, max_deliver=5, nack_delay=1.0)
        for cls, durable, handler in subs
    ]
