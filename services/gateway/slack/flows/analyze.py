"""/r42 analyze: the KG owner's plan in the admin's DM; apply the checked actions, or undo."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from services.gateway.core import user_message
from services.gateway.slack.api import Blocks
from services.gateway.slack.blocks import analyze as bz
from services.gateway.slack.blocks.kit import escape, notice_blocks
from services.gateway.slack.blocks.reviews import when
from services.gateway.slack.gateway import Reply, SlackGateway

log = logging.getLogger(__name__)

Respond = Callable[[Blocks, str], Awaitable[None]]


def _now() -> str:
    return when(datetime.now(UTC))


async def analyze(gw: SlackGateway, *, user: str, respond: Respond) -> None:
    """Ask for a plan (admins only) and post it in the admin's DM with R42."""
    client = gw.client
    if not client.is_admin(user):  # audited as refused by the call below
        await client.analysis.analyze(user_id=user, surface="slack")
    await respond(
        notice_blocks(":mag: De analyse loopt; het plan verschijnt zo in je DM met R42."),
        "Analyse gestart",
    )
    try:
        plan = await client.analysis.analyze(user_id=user, surface="slack")
    except Exception as exc:
        message = f":warning: De analyse mislukte: {escape(user_message(exc))}"
        await respond(notice_blocks(message), "Analyse mislukt")
        return
    channel = await gw.api.dm_channel(user)
    await gw.api.post(channel, bz.plan_blocks(plan), text=bz.TITLE)


async def apply_click(
    gw: SlackGateway, *, user: str, plan_id: str, state: dict[str, Any], reply: Reply
) -> None:
    """Apply selected: the checked actions of the stored plan; the message gets an Undo."""
    keys = bz.selected_keys(state)
    try:
        result = await gw.client.analysis.apply(
            user_id=user, plan_id=plan_id, keys=keys, surface="slack"
        )
    except Exception as exc:
        await reply.private(f"Niet toegepast: {user_message(exc)}")
        return
    await reply.update(bz.applied_blocks(result, by=user, at=_now()), "Plan toegepast")


async def discard_click(gw: SlackGateway, *, user: str, plan_id: str, reply: Reply) -> None:
    """Discard: the plan is left to expire; only admins may close it."""
    try:
        await gw.client.analysis.discard(user_id=user, plan_id=plan_id, surface="slack")
    except Exception as exc:
        await reply.private(f"Niet verworpen: {user_message(exc)}")
        return
    await reply.update(bz.discarded_blocks(by=user, at=_now()), "Plan verworpen")


async def undo_click(gw: SlackGateway, *, user: str, undo_id: str, reply: Reply) -> None:
    """Undo on the result message."""
    try:
        result = await gw.client.analysis.undo(user_id=user, undo_id=undo_id, surface="slack")
    except Exception as exc:
        await reply.private(f"Niet ongedaan gemaakt: {user_message(exc)}")
        return
    await reply.update(bz.undone_blocks(result, by=user, at=_now()), "Ongedaan gemaakt")
