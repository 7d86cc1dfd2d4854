"""Catch-alls, registered last: unknown events, actions and views are acked and logged."""

from __future__ import annotations

import logging
import re
from typing import Any

from slack_bolt.async_app import AsyncApp

from services.gateway.slack.listeners.interactions import action_value, user_of

log = logging.getLogger(__name__)


def register(app: AsyncApp) -> None:
    """Ack what no feature listener took, so Slack does not retry or show an error."""

    @app.event(re.compile(".*"))
    async def on_other(event: dict[str, Any]) -> None:
        log.debug("ignoring event %s", event.get("type"))

    @app.action(re.compile(".*"))
    async def unknown(ack: Any, body: dict[str, Any]) -> None:
        await ack()
        log.warning(
            "ignoring unknown action %r from %s", action_value(body)[0][:100], user_of(body)
        )

    @app.view(re.compile(".*"))
    async def unknown_view(ack: Any, view: dict[str, Any]) -> None:
        await ack()
        log.warning("ignoring unknown view %r", str(view.get("callback_id"))[:100])
