"""Curriculum listeners: the edit and clear buttons, and the order modal's submission."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from services.gateway.slack import ids
from services.gateway.slack.blocks import curriculum as bk
from services.gateway.slack.flows import curriculum
from services.gateway.slack.gateway import Reply, SlackGateway
from services.gateway.slack.listeners.interactions import (
    container,
    on_click,
    text_input,
    user_of,
)


def register(app: AsyncApp, gw: SlackGateway) -> None:
    """The /r42 curriculum buttons and modal."""
    bg = gw.background

    async def edit(body: dict[str, Any], reply: Reply) -> None:
        await curriculum.open_editor(gw, user=user_of(body),
                                     trigger_id=str(body.get("trigger_id") or ""),
                                     channel=container(body)[0], reply=reply)  # fmt: skip

    async def clear(body: dict[str, Any], reply: Reply) -> None:
        await curriculum.clear(gw, user=user_of(body), reply=reply)

    on_click(app, gw, ids.CURRICULUM_EDIT, edit, name="curriculum-edit")
    on_click(app, gw, ids.CURRICULUM_CLEAR, clear, name="curriculum-clear")

    @app.view(ids.CURRICULUM_VIEW)
    async def submit(ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        user = user_of(body)
        # Validated and stored before the ack (a few store reads), so errors show inline.
        errors, done = await curriculum.save(
            gw,
            user=user,
            order=text_input(view, bk.ORDER_BLOCK, bk.ORDER_ACTION),
            start=text_input(view, bk.START_BLOCK, bk.START_ACTION),
        )
        if errors:
            await ack(response_action="errors", errors=errors)
            return
        await ack()
        channel = curriculum.channel_of(str(view.get("private_metadata") or ""))
        if channel:
            bg.spawn(gw.api.ephemeral(channel, user, done), name="curriculum-saved")
