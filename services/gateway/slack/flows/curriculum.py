"""/r42 curriculum: the coming weeks' topics; admins set their order in a modal."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable

from services.gateway.core import user_message
from services.gateway.core.curriculum import this_week
from services.gateway.slack.api import Blocks
from services.gateway.slack.blocks import curriculum as bk
from services.gateway.slack.gateway import Reply, SlackGateway
from shared.errors import BadInputError

log = logging.getLogger(__name__)

Respond = Callable[[Blocks, str], Awaitable[None]]
_WEEK = re.compile(r"^\d{4}-W(0[1-9]|[1-4]\d|5[0-3])$")


async def show(gw: SlackGateway, *, user: str, respond: Respond) -> None:
    """The schedule (anyone may read it)."""
    weeks = await gw.client.curriculum.schedule()
    await respond(bk.schedule_blocks(weeks, admin=gw.client.is_admin(user)), "Curriculum")


async def open_editor(
    gw: SlackGateway, *, user: str, trigger_id: str, channel: str, reply: Reply
) -> None:
    """The order modal (admins only; a refusal is audited)."""
    try:
        if not gw.client.is_admin(user):
            await gw.client.curriculum.set_order(user_id=user, refs=[], surface="slack")
        start = this_week()
        weeks = await gw.client.curriculum.schedule(start=start, weeks=52)
        await gw.api.open_view(trigger_id, bk.order_modal(weeks, channel=channel, start=start))
    except Exception as exc:
        await reply.private(user_message(exc))


def submission_errors(*, order: str, start: str) -> dict[str, str]:
    """What is wrong with the modal's input before it is tried (per input block)."""
    errors = {}
    if not [line for line in order.splitlines() if line.strip()]:
        errors[bk.ORDER_BLOCK] = "Noem minstens één onderwerp."
    if start.strip() and not _WEEK.fullmatch(start.strip()):
        errors[bk.START_BLOCK] = "Een ISO-week zoals 2026-W49."
    return errors


async def save(
    gw: SlackGateway, *, user: str, order: str, start: str
) -> tuple[dict[str, str], str]:
    """Store the order; (errors per block, the confirmation) — errors leave it unchanged."""
    errors = submission_errors(order=order, start=start)
    if errors:
        return errors, ""
    try:
        weeks = await gw.client.curriculum.set_order(
            user_id=user, refs=order.splitlines(), surface="slack", start=start.strip() or None
        )
    except BadInputError as exc:
        return {bk.ORDER_BLOCK: str(exc)[:150]}, ""
    except Exception as exc:
        return {bk.ORDER_BLOCK: user_message(exc)[:150]}, ""
    first, last = weeks[0].week, weeks[-1].week
    return {}, f":calendar: Curriculum opgeslagen: {len(weeks)} weken, {first} t/m {last}."


def channel_of(private_metadata: str) -> str:
    """The channel the modal was opened from."""
    try:
        return str(json.loads(private_metadata or "{}").get("c") or "")
    except ValueError:
        return ""


async def clear(gw: SlackGateway, *, user: str, reply: Reply) -> None:
    """Leegmaken: every coming week back to the weighted draw."""
    try:
        count = await gw.client.curriculum.clear(user_id=user, surface="slack")
    except Exception as exc:
        await reply.private(user_message(exc))
        return
    weeks = await gw.client.curriculum.schedule()
    await reply.update(bk.schedule_blocks(weeks, admin=True), "Curriculum")
    await reply.private(f"Curriculum leeggemaakt ({count} weken); /learn kiest weer per persoon.")
