"""Stale-content listeners: the checkboxes and Geselecteerde vernieuwen."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from services.gateway.slack import ids
from services.gateway.slack.flows import stale
from services.gateway.slack.gateway import SlackGateway
from services.gateway.slack.listeners.interactions import interaction_reply, user_of


def register(app: AsyncApp, gw: SlackGateway) -> None:
    """The /r42 stale list's interactive parts."""
    bg = gw.background

    @app.action(ids.STALE_PICK_RE)
    async def pick(ack: Any) -> None:
        await ack()  # a checkbox toggled: its state arrives with the button

    @app.action(ids.STALE_REGENERATE)
    async def regenerate(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        bg.spawn(
            stale.regenerate_click(
                gw,
                user=user_of(body),
                state=body.get("state") or {},
                reply=interaction_reply(gw, body, respond),
            ),
            name="stale-regenerate",
        )
