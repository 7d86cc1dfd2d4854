"""Source delete listeners: Verwijderen on the list, the confirmation's buttons, Undo
(ephemeral lists and confirmations arrive without `message`: the reply goes to response_url)."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from services.gateway.slack import ids
from services.gateway.slack.blocks import sources as bs
from services.gateway.slack.flows import sources
from services.gateway.slack.gateway import Reply, SlackGateway
from services.gateway.slack.listeners.interactions import action_value, on_click, user_of

CHOICES: dict[str, sources.Choice] = {bs.DELETE_YES: "yes", bs.DELETE_RAISE: "raise",
                                      bs.DELETE_NO: "no"}  # fmt: skip


def register(app: AsyncApp, gw: SlackGateway) -> None:
    """The buttons of the delete flow."""

    async def asked(body: dict[str, Any], reply: Reply) -> None:
        await sources.delete_asked(gw, user=user_of(body), source_id=action_value(body)[1],
                                   reply=reply)  # fmt: skip

    async def decided(body: dict[str, Any], reply: Reply) -> None:
        action_id, value = action_value(body)
        await sources.delete_decided(gw, user=user_of(body), value=value,
                                     choice=CHOICES[action_id], reply=reply)  # fmt: skip

    async def undo(body: dict[str, Any], reply: Reply) -> None:
        await sources.undo_clicked(gw, user=user_of(body), undo_id=action_value(body)[1],
                                   reply=reply)  # fmt: skip

    on_click(app, gw, bs.DELETE_RE, asked, name="source-delete")
    on_click(app, gw, ids.matching(*CHOICES), decided, name="source-delete")
    on_click(app, gw, bs.UNDO, undo, name="source-undo")
