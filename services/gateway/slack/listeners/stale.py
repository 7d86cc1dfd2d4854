"""Stale-content listeners: the checkboxes and Geselecteerde vernieuwen."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from services.gateway.slack import ids
from services.gateway.slack.flows import stale
from services.gateway.slack.gateway import Reply, SlackGateway
from services.gateway.slack.listeners.interactions import on_click, user_of


def register(app: AsyncApp, gw: SlackGateway) -> None:
    """The /r42 stale list's interactive parts."""

    @app.action(ids.STALE_PICK_RE)
    async def pick(ack: Any) -> None:
        await ack()  # a checkbox toggled: its state arrives with the button

    async def regenerate(body: dict[str, Any], reply: Reply) -> None:
        state = body.get("state") or {}
        await stale.regenerate_click(gw, user=user_of(body), state=state, reply=reply)

    on_click(app, gw, ids.STALE_REGENERATE, regenerate, name="stale-regenerate")
