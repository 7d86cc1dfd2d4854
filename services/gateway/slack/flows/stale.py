"""/r42 stale: the stale learning parts with checkboxes; regenerate the checked ones."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from services.gateway.core import user_message
from services.gateway.slack.api import Blocks
from services.gateway.slack.blocks import stale as bs
from services.gateway.slack.blocks.reviews import when
from services.gateway.slack.gateway import Reply, SlackGateway

Respond = Callable[[Blocks, str], Awaitable[None]]


async def show(gw: SlackGateway, *, user: str, respond: Respond) -> None:
    """The stale list (admins only; refusals audited)."""
    reply = await gw.client.stale.list(user_id=user, surface="slack")
    await respond(bs.stale_blocks(reply), bs.TITLE)


async def regenerate_click(
    gw: SlackGateway, *, user: str, state: dict[str, Any], reply: Reply
) -> None:
    """Vernieuwen: the checked parts, then what happened to each topic."""
    parts = bs.selected_parts(state)
    if not gw.client.is_admin(user) or not parts:
        try:  # refused (and audited) or told to pick something, in one place
            await gw.client.stale.regenerate(user_id=user, parts=parts, surface="slack")
        except Exception as exc:
            await reply.private(user_message(exc))
        return
    await reply.update(bs.working_blocks(len(parts), by=user), bs.TITLE)
    try:
        result = await gw.client.stale.regenerate(user_id=user, parts=parts, surface="slack")
    except Exception as exc:
        await reply.private(f"Vernieuwen mislukte: {user_message(exc)}")
        return
    at = when(datetime.now(UTC))
    await reply.update(bs.regenerated_blocks(result, by=user, at=at), bs.TITLE)
