"""Graph-analysis listeners: the plan's checkboxes, Apply selected, Discard and Undo."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from services.gateway.slack import ids
from services.gateway.slack.flows import analyze
from services.gateway.slack.gateway import SlackGateway
from services.gateway.slack.listeners.interactions import action_value, interaction_reply, user_of


def register(app: AsyncApp, gw: SlackGateway) -> None:
    """The plan message's interactive parts."""
    bg = gw.background

    @app.action(ids.PLAN_PICK_RE)
    async def pick(ack: Any) -> None:
        await ack()  # a checkbox toggled: its state arrives with Apply selected

    @app.action(ids.PLAN_APPLY)
    async def apply(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        bg.spawn(
            analyze.apply_click(
                gw,
                user=user_of(body),
                plan_id=action_value(body)[1],
                state=body.get("state") or {},
                reply=interaction_reply(gw, body, respond),
            ),
            name="plan-apply",
        )

    @app.action(ids.PLAN_DISCARD)
    async def discard(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        bg.spawn(
            analyze.discard_click(
                gw,
                user=user_of(body),
                plan_id=action_value(body)[1],
                reply=interaction_reply(gw, body, respond),
            ),
            name="plan-discard",
        )

    @app.action(ids.PLAN_UNDO)
    async def undo(ack: Any, body: dict[str, Any], respond: Any) -> None:
        await ack()
        bg.spawn(
            analyze.undo_click(
                gw,
                user=user_of(body),
                undo_id=action_value(body)[1],
                reply=interaction_reply(gw, body, respond),
            ),
            name="plan-undo",
        )
