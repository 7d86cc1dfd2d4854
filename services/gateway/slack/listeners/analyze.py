"""Graph-analysis listeners: the plan's checkboxes, Apply selected, Discard and Undo."""

from __future__ import annotations

from typing import Any

from slack_bolt.async_app import AsyncApp

from services.gateway.slack import ids
from services.gateway.slack.flows import analyze
from services.gateway.slack.gateway import Reply, SlackGateway
from services.gateway.slack.listeners.interactions import action_value, on_click, user_of


def register(app: AsyncApp, gw: SlackGateway) -> None:
    """The plan message's interactive parts."""

    @app.action(ids.PLAN_PICK_RE)
    async def pick(ack: Any) -> None:
        await ack()  # a checkbox toggled: its state arrives with Apply selected

    async def apply(body: dict[str, Any], reply: Reply) -> None:
        state = body.get("state") or {}
        await analyze.apply_click(gw, user=user_of(body), plan_id=action_value(body)[1],
                                  state=state, reply=reply)  # fmt: skip

    async def discard(body: dict[str, Any], reply: Reply) -> None:
        await analyze.discard_click(gw, user=user_of(body), plan_id=action_value(body)[1],
                                    reply=reply)  # fmt: skip

    async def undo(body: dict[str, Any], reply: Reply) -> None:
        await analyze.undo_click(gw, user=user_of(body), undo_id=action_value(body)[1],
                                 reply=reply)  # fmt: skip

    on_click(app, gw, ids.PLAN_APPLY, apply, name="plan-apply")
    on_click(app, gw, ids.PLAN_DISCARD, discard, name="plan-discard")
    on_click(app, gw, ids.PLAN_UNDO, undo, name="plan-undo")
